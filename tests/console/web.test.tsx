import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { createCsrf, csrfGuard, MAX_FORM_BYTES } from '../../src/http/web/csrf.js';
import { StackedBars } from '../../src/http/web/components/chart.js';
import { Table } from '../../src/http/web/components/table.js';
import { Layout, sendPage } from '../../src/http/web/layout.js';
import { pageHeaders } from '../../src/http/web/security.js';
import { registerAssets } from '../../src/http/web/static-assets.js';
import { WEBSHELL_RULE_ID, seedAlerts, startConsoleHarness } from './harness.js';

/** A page and a form behind the CSRF guard, bound to the `s` cookie as the session. */
function app() {
  const csrf = createCsrf(Buffer.alloc(32, 7));
  const a = new Hono();
  registerAssets(a);
  a.get('/', pageHeaders(), (c) => sendPage(c, <Layout title="T" brand="B" nav={[{ href: '/', label: 'Home' }]} current="/"><StackedBars title="c" buckets={['a', 'b']} series={[{ name: 'x', values: [1, 3] }]} /></Layout>));
  a.post('/form', csrfGuard(csrf, (c) => c.req.header('cookie'), (c, status, message) => c.json({ error: message }, status)), (c) => c.text('done'));
  return { a, csrf };
}

const post = (a: Hono, headers: Record<string, string>, body: string) =>
  a.request('http://vigil.test/form', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), ...headers }, body });

describe('the shared web pieces', () => {
  it('serve a page with the strict CSP, its stylesheet and module from /assets/, and no inline script or style', async () => {
    const { a } = app();
    const res = await a.request('/');
    const html = await res.text();
    assert.match(res.headers.get('content-security-policy')!, /default-src 'none'; script-src 'self'; style-src 'self'/);
    assert.match(html, /^<!doctype html>/);
    const css = /href="(\/assets\/vigil\.css\?v=[^"]+)"/.exec(html)![1]!;
    const js = /src="(\/assets\/vigil\.js\?v=[^"]+)"/.exec(html)![1]!;
    assert.equal((await a.request(css)).headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal((await a.request(js)).headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal((await a.request('/assets/nothing.css')).status, 404);
    assert.doesNotMatch(html, /<script(?![^>]*src=)/);
    assert.doesNotMatch(html, /\sstyle=/);
    assert.match(html, /<rect class="series-0"[^>]*><title>b: x 3<\/title>/, 'the chart draws a bar per value with its number');
  });

  it('takes a form with its binding\'s token from this origin, and refuses every other', async () => {
    const { a, csrf } = app();
    const token = csrf.tokenFor('s=1');
    assert.equal((await post(a, { cookie: 's=1', origin: 'http://vigil.test', host: 'vigil.test' }, `_csrf=${token}`)).status, 200);
    assert.equal((await post(a, { cookie: 's=1', 'x-csrf-token': token }, '')).status, 200, 'the header carries it for a script');
    assert.equal((await post(a, { cookie: 's=2' }, `_csrf=${token}`)).status, 403, 'another session');
    assert.equal((await post(a, { cookie: 's=1' }, '_csrf=')).status, 403, 'no token');
    assert.equal((await post(a, { cookie: 's=1', origin: 'http://evil.test', host: 'vigil.test' }, `_csrf=${token}`)).status, 403, 'another origin');
    assert.equal((await post(a, { cookie: 's=1', origin: 'null', host: 'vigil.test' }, `_csrf=${token}`)).status, 403, 'an opaque origin');
    assert.equal((await post(a, { cookie: 's=1', 'sec-fetch-site': 'cross-site' }, `_csrf=${token}`)).status, 403, 'a cross-site fetch');
    assert.equal((await post(a, { cookie: 's=1', 'content-length': String(MAX_FORM_BYTES + 1) }, `_csrf=${token}`)).status, 413);
    assert.equal(createCsrf(Buffer.alloc(32, 8)).verify('s=1', token), false, 'a restart (new key) voids the tokens');
  });

  it('sorts by header links and marks a table for keyboard navigation', () => {
    const html = String(<Table rows={[{ id: 'a' }]} rowKey={(r) => r.id} rowHref={(r) => `/x/${r.id}`} keyboard empty="none" sort={{ path: '/x', query: { status: 'open', cursor: 'c' }, current: 'id' }} columns={[{ header: 'Id', sort: 'id', cell: (r) => r.id }]} />);
    assert.match(html, /data-keynav=""/);
    assert.match(html, /href="\/x\?status=open&amp;sort=-id"/, 'the current ascending sort links to descending, back to the first page');
    assert.match(html, /<tr data-key="a" data-href="\/x\/a">/);
    assert.equal(String(<Table rows={[]} rowKey={() => ''} empty="Nothing here." columns={[]} />), '<p class="empty">Nothing here.</p>');
  });
});

describe('rule quality in Chromium against vigil serve', () => {
  it('shows the noisiest rules on the overview, linking to the rule page and its Quality section', async () => {
    const h = await startConsoleHarness();
    try {
      const ids = await seedAlerts(h, 6);
      // Four of six dismissed at once as false positives, one found true positive.
      const bulk = await h.api('analyst', '/api/v1/alerts/reviews', { method: 'POST', body: JSON.stringify({ alertIds: ids.slice(0, 4), status: 'dismissed', disposition: 'false_positive', reason: 'the deploy job' }) });
      assert.equal(bulk.status, 200, await bulk.text());
      const one = await h.api('analyst', `/api/v1/alerts/${ids[4]}`, { method: 'PATCH', body: JSON.stringify({ status: 'in_review', disposition: 'true_positive', reason: 'real' }) });
      assert.equal(one.status, 200, await one.text());
      const { context, page } = await h.signedIn('analyst');
      await page.goto(`${h.url}/`);
      const row = page.locator('#noisiest-rules tbody tr').first();
      assert.deepEqual(await row.locator('td').allInnerTexts(), ['Webshell upload', '6', '80 %', '0 s']);
      assert.equal(await row.locator('td').nth(1).locator('a').getAttribute('href'), `/alerts?rule=${WEBSHELL_RULE_ID}`);
      await Promise.all([page.waitForURL((u) => u.pathname === `/rules/${WEBSHELL_RULE_ID}`), row.locator('td').first().locator('a').click()]);
      const facts = await page.locator('#quality dl.facts dd').allInnerTexts();
      assert.deepEqual(facts, ['6', '5', '1 (20 %)', '0 (0 %)', '4 (80 %)', '0 s', '0']);
      await context.close();
    } finally {
      await h.close();
    }
  });
});
