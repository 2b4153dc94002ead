import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { RAW_MARKER, WEBSHELL_RULE_ID, seedAlerts, signIn, startConsoleHarness, type ConsoleHarness } from './harness.js';

type Timeline = Array<{ kind: string; principal: string; authentication: string; to?: string; reason?: string; disposition?: string; bulk?: boolean }>;

/** The CSRF token of a page's forms (every signed-in page has at least the sign-out form). */
const csrfOf = async (page: Page) => page.locator('input[name=_csrf]').first().inputValue();
/** The session cookie of a page's context, as a Cookie header. */
const cookieOf = async (page: Page) => (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');

describe('the analyst console in Chromium against vigil serve', () => {
  let h: ConsoleHarness;
  let alertIds: string[];
  before(async () => {
    h = await startConsoleHarness();
    alertIds = await seedAlerts(h, 160);
  });
  after(async () => { await h?.close(); });

  it('sends a visitor to sign in, takes a pasted token once, and keeps only an HttpOnly SameSite=Strict session cookie', async () => {
    const context = await h.browser.newContext();
    const page = await context.newPage();
    const first = await page.goto(`${h.url}/alerts?status=open`);
    assert.equal(new URL(page.url()).pathname, '/sign-in', 'an anonymous visitor is sent to sign in');
    assert.match(first!.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    await page.fill('#token', h.tokens.analyst);
    await Promise.all([page.waitForURL((u) => u.pathname === '/alerts'), page.click('form[action="/sign-in"] button[type=submit]')]);
    assert.equal(new URL(page.url()).search, '?status=open', 'back where the visitor wanted to go');
    assert.match(await page.locator('.who').innerText(), /analyst-user/);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'vigil-console');
    assert.ok(session, 'a session cookie');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.ok(!cookies.some((c) => c.value.includes(h.tokens.analyst)), 'the token is not a cookie');
    const storage = await page.evaluate("JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage })") as string;
    assert.ok(!storage.includes(h.tokens.analyst), 'the token is not in web storage');
    assert.ok(!(await page.content()).includes(h.tokens.analyst), 'the token is not in the page');
    // Signing out ends the session: the old cookie no longer opens a page.
    const old = await cookieOf(page);
    await Promise.all([page.waitForURL((u) => u.pathname === '/sign-in'), page.click('.who button')]);
    const replay = await fetch(`${h.url}/alerts`, { headers: { cookie: old, accept: 'text/html' }, redirect: 'manual' });
    assert.equal(replay.status, 303);
    assert.match(replay.headers.get('location') ?? '', /^\/sign-in/);
    // Both are in the audit trail, with who and how.
    const audit = (await (await h.api('admin', '/api/v1/audit?route=%2Fsign-in')).json()) as { entries: Array<{ principal: string | null; status: number; authentication: string }> };
    assert.ok(audit.entries.some((e) => e.principal === 'analyst-user' && e.status === 303 && e.authentication === 'bearer'));
    const out = (await (await h.api('admin', '/api/v1/audit?route=%2Fsign-out')).json()) as { entries: Array<{ principal: string | null; authentication: string }> };
    assert.ok(out.entries.some((e) => e.principal === 'analyst-user' && e.authentication === 'console_session'));
    await context.close();
  });

  it('refuses a wrong token on the sign-in page without setting a cookie', async () => {
    const context = await h.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${h.url}/sign-in`);
    await page.fill('#token', 'vgl_not-a-real-token-not-a-real-token-not-a-rea');
    await page.click('form[action="/sign-in"] button[type=submit]');
    await page.waitForSelector('.notice-error');
    assert.match(await page.locator('.notice-error').innerText(), /not valid/);
    assert.ok(!(await context.cookies()).some((c) => c.name === 'vigil-console'));
    await context.close();
  });

  it('serves every page with the strict CSP and no inline script or style', async () => {
    const res = await fetch(`${h.url}/sign-in`);
    const csp = res.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "form-action 'self'"]) assert.ok(csp.includes(directive), directive);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    const { context, page } = await h.signedIn('admin');
    for (const path of ['/', '/alerts', `/alerts/${alertIds[0]}`, '/incidents', '/plan', '/graph', '/events', '/rules', '/audit']) {
      const r = await page.goto(`${h.url}${path}`);
      assert.equal(r!.status(), 200, path);
      assert.ok((r!.headers()['content-security-policy'] ?? '').includes("script-src 'self'"), path);
      const html = await page.content();
      assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), `${path}: no inline script`);
      assert.ok(!/\sstyle=/.test(html), `${path}: no inline style`);
    }
    await context.close();
  });

  it('filters the queue from its form, and the filters live in a shareable URL', async () => {
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/alerts?rule=${WEBSHELL_RULE_ID}`);
    assert.match(await page.locator('h1').innerText(), /160 matching/);
    await page.selectOption('select[name=severity]', 'critical');
    await Promise.all([page.waitForURL(/severity=critical/), page.click('form.filters button[type=submit]')]);
    assert.match(await page.locator('h1').innerText(), /0 matching/, 'the rule is high, so nothing is critical');
    await page.selectOption('select[name=severity]', 'high');
    await page.fill('input[name=entity]', 'ip:10.1.0.7');
    await Promise.all([page.waitForURL(/entity=ip%3A10\.1\.0\.7/), page.click('form.filters button[type=submit]')]);
    assert.match(await page.locator('h1').innerText(), /1 matching/);
    assert.equal(await page.locator('#queue tbody tr').count(), 1);
    // The same URL in another browser shows the same list; paging moves by cursor.
    const shared = page.url();
    await page.goto(`${h.url}/alerts?rule=${WEBSHELL_RULE_ID}&sort=title`);
    assert.equal(await page.locator('#queue tbody tr').count(), 50);
    const firstPage = await page.locator('#queue tbody tr').first().getAttribute('data-key');
    await page.click('a[rel=next]');
    const second = await page.locator('#queue tbody tr').first().getAttribute('data-key');
    assert.notEqual(firstPage, second);
    await page.goto(shared);
    assert.equal(await page.locator('#queue tbody tr').count(), 1);
    await context.close();
  });

  it('moves through the queue with j/k, selects with x and opens with Enter', async () => {
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/alerts?rule=${WEBSHELL_RULE_ID}`);
    const rows = page.locator('#queue tbody tr');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    await page.keyboard.press('k');
    assert.equal(await rows.nth(1).getAttribute('class'), 'kn-current');
    await page.keyboard.press('x');
    assert.equal(await rows.nth(1).locator('input[type=checkbox]').isChecked(), true);
    assert.equal(await rows.nth(0).locator('input[type=checkbox]').isChecked(), false);
    const second = await rows.nth(1).getAttribute('data-key');
    await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/alerts/alr_')), page.keyboard.press('Enter')]);
    assert.equal(decodeURIComponent(new URL(page.url()).pathname), `/alerts/${second}`);
    await context.close();
  });

  it('promotes three selected alerts into a new incident', async () => {
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/alerts?rule=${WEBSHELL_RULE_ID}&sort=title`);
    const picked: string[] = [];
    for (const i of [0, 2, 4]) {
      const row = page.locator('#queue tbody tr').nth(i);
      picked.push((await row.getAttribute('data-key'))!);
      await row.locator('input[type=checkbox]').check();
    }
    await page.fill('#bulk input[name=title]', 'Webshell campaign');
    await page.fill('#bulk input[name=reason]', 'same uploader pattern');
    await Promise.all([page.waitForURL(/\/incidents\/inc_/), page.click('#bulk button[formaction="/incidents/promote"]')]);
    assert.match(await page.locator('h1').innerText(), /Webshell campaign/);
    const listed = await page.locator('table.data tbody tr a[href^="/alerts/"]').evaluateAll((as) => as.map((a) => decodeURIComponent(a.getAttribute('href')!.slice(8))));
    assert.deepEqual(listed.sort(), [...picked].sort());
    const id = decodeURIComponent(new URL(page.url()).pathname.slice('/incidents/'.length));
    const incident = (await (await h.api('viewer', `/api/v1/incidents/${id}`)).json()) as { origin: string; alertIds: string[] };
    assert.equal(incident.origin, 'promoted');
    assert.deepEqual([...incident.alertIds].sort(), [...picked].sort());
    // Its lifecycle moves on from its page, with the reason in its timeline.
    await page.selectOption('form[action$="/status"] select[name=status]', 'investigating');
    await page.fill('form[action$="/status"] input[name=reason]', 'owner contacted');
    await Promise.all([page.waitForURL(/notice=Incident/), page.click('form[action$="/status"] button')]);
    assert.match(await page.locator('dl.facts').innerText(), /investigating/);
    assert.match(await page.locator('ol.timeline').innerText(), /owner contacted/);
    await context.close();
  });

  it('reviews all 150+ alerts that match a filter with one reason; each alert history names the reviewer', async () => {
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/alerts?rule=${WEBSHELL_RULE_ID}&status=open`);
    assert.match(await page.locator('h1').innerText(), /160 matching/);
    await page.selectOption('#bulk select[name=scope]', 'matching');
    await page.selectOption('#bulk select[name=status]', 'dismissed');
    await page.selectOption('#bulk select[name=disposition]', 'false_positive');
    await page.fill('#bulk input[name=reason]', 'authorised upload test by the web team');
    await Promise.all([page.waitForURL(/notice=/), page.click('#bulk button[value=review]')]);
    assert.match(await page.locator('.notice-ok').innerText(), /160 alerts set to dismissed/);
    assert.match(await page.locator('h1').innerText(), /0 matching/, 'back on the same filtered queue, now empty');
    for (const id of alertIds) {
      const a = (await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { status: string; timeline: Timeline };
      assert.equal(a.status, 'dismissed', id);
      const last = a.timeline.filter((e) => e.kind === 'review').at(-1)!;
      assert.deepEqual([last.principal, last.authentication, last.to, last.disposition, last.reason], ['analyst-user', 'console_session', 'dismissed', 'false_positive', 'authorised upload test by the web team'], id);
    }
    await page.goto(`${h.url}/alerts/${alertIds[77]}`);
    const history = await page.locator('ol.timeline').innerText();
    assert.match(history, /analyst-user \(console_session\)/);
    assert.match(history, /authorised upload test by the web team/);
    await context.close();
  });

  it('reviews, assigns and annotates one alert from its page', async () => {
    const { context, page } = await h.signedIn('analyst');
    const id = alertIds[5]!;
    await page.goto(`${h.url}/alerts/${id}`);
    await page.selectOption('form[action$="/review"] select[name=status]', 'in_review');
    await page.fill('form[action$="/review"] input[name=reason]', 'looking again');
    await Promise.all([page.waitForURL(/notice=/), page.click('form[action$="/review"] button')]);
    await Promise.all([page.waitForURL(/notice=Assigned/), page.click('form[action$="/assign"] button[name=me]')]);
    await page.fill('form[action$="/notes"] input[name=text]', 'asked the web team');
    await Promise.all([page.waitForURL(/notice=Note/), page.click('form[action$="/notes"] button')]);
    const a = (await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { status: string; assignee: string; timeline: Timeline };
    assert.equal(a.status, 'in_review');
    assert.equal(a.assignee, 'analyst-user');
    assert.deepEqual(a.timeline.slice(-3).map((e) => e.kind), ['review', 'assignment', 'note']);
    await context.close();
  });

  it('shows evidence to an analyst, and to a console principal no evidence anywhere', async () => {
    const analyst = await h.signedIn('analyst');
    await analyst.page.goto(`${h.url}/alerts/${alertIds[3]}`);
    await analyst.page.locator('#evidence details summary').first().click();
    assert.match(await analyst.page.locator('#evidence').innerText(), new RegExp(RAW_MARKER), 'evidence expands to the stored event');
    await analyst.context.close();

    const { context, page } = await h.signedIn('console');
    assert.match(await page.locator('h1').innerText(), /Overview/);
    // Every page a console principal can reach by following links, two levels deep.
    const seen = new Set<string>();
    let frontier = ['/'];
    for (let depth = 0; depth < 2; depth++) {
      const next: string[] = [];
      for (const path of frontier) {
        if (seen.has(path)) continue;
        seen.add(path);
        const r = await page.goto(`${h.url}${path}`);
        const html = await page.content();
        assert.ok(!html.includes(RAW_MARKER), `${path} shows no raw event`);
        assert.ok(!html.includes('/upload/shell-'), `${path} shows no event attribute`);
        if (r!.status() !== 200) continue;
        next.push(...(await page.locator('a[href^="/"]').evaluateAll((as) => as.map((a) => a.getAttribute('href')!))).filter((p) => !p.startsWith('/assets/')));
      }
      frontier = next;
    }
    assert.ok(seen.size >= 1);
    // Pages with evidence are refused outright, as the API refuses them.
    for (const path of [`/alerts/${alertIds[3]}`, '/events', `/events?entityKey=ip:10.1.0.3`, '/alerts']) {
      const r = await page.goto(`${h.url}${path}`);
      assert.equal(r!.status(), 403, path);
      assert.ok(!(await page.content()).includes(RAW_MARKER), path);
    }
    const nav = await page.locator('header nav').innerText();
    assert.doesNotMatch(nav, /Events|Alerts/);
    await context.close();
  });

  it('offers a viewer no review and refuses a forged review POST', async () => {
    const { context, page } = await h.signedIn('viewer');
    const id = alertIds[10]!;
    await page.goto(`${h.url}/alerts`);
    assert.equal(await page.locator('#bulk').count(), 0, 'no bulk actions');
    assert.equal(await page.locator('#queue input[type=checkbox]').count(), 0, 'nothing to select');
    await page.goto(`${h.url}/alerts/${id}`);
    assert.equal(await page.locator('form[action$="/review"]').count(), 0, 'no review form');
    assert.equal(await page.locator('form[action="/incidents/promote"]').count(), 0, 'no promote form');
    // A forged POST with the viewer's own session and a valid CSRF token: the permission still refuses it.
    const before = (await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { status: string; timeline: Timeline };
    const forged = await fetch(`${h.url}/alerts/${id}/review`, {
      method: 'POST', redirect: 'manual',
      headers: { cookie: await cookieOf(page), origin: h.url, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: await csrfOf(page), status: 'dismissed', reason: 'forged' }).toString(),
    });
    assert.equal(forged.status, 403);
    const afterwards = (await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { status: string; timeline: Timeline };
    assert.deepEqual(afterwards, before);
    await context.close();
  });

  it('refuses a form without the CSRF token, with another session\'s token, or from another origin', async () => {
    const a = await h.signedIn('analyst');
    const b = await h.signedIn('analyst');
    const id = alertIds[20]!;
    await a.page.goto(`${h.url}/alerts/${id}`);
    await b.page.goto(`${h.url}/alerts/${id}`);
    const post = (headers: Record<string, string>, fields: Record<string, string>) => fetch(`${h.url}/alerts/${id}/notes`, {
      method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString(),
    });
    const cookie = await cookieOf(a.page);
    const token = await csrfOf(a.page);
    assert.equal((await post({ cookie, origin: h.url }, { text: 'no token' })).status, 403);
    assert.equal((await post({ cookie, origin: h.url }, { text: 'other session', _csrf: await csrfOf(b.page) })).status, 403);
    assert.equal((await post({ cookie, origin: 'https://evil.example' }, { text: 'cross site', _csrf: token })).status, 403);
    assert.equal((await post({ cookie, origin: h.url, 'sec-fetch-site': 'cross-site' }, { _csrf: token, text: 'cross site' })).status, 403);
    const ok = await post({ cookie, origin: h.url }, { text: 'the real one', _csrf: token });
    assert.equal(ok.status, 303, 'the same request with its own token and origin passes');
    const notes = ((await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { timeline: Timeline & Array<{ text?: string }> }).timeline.filter((e) => e.kind === 'note');
    assert.deepEqual(notes.map((n) => (n as { text?: string }).text), ['the real one']);
    await a.context.close();
    await b.context.close();
  });

  it('imports Sigma YAML from the rules page and shows what is wrong with a bad rule', async () => {
    const { context, page } = await h.signedIn('rule_admin');
    await page.goto(`${h.url}/rules`);
    await page.fill('#yaml', 'title: Broken\nlogsource: {product: zeek}\ndetection:\n  sel: {a: 1}\n  condition: nope\n');
    await page.click('#import button[type=submit]');
    await page.waitForSelector('#import .notice-error');
    assert.match(await page.locator('#import .notice-error').innerText(), /nope|condition/i);
    assert.match(await page.locator('#yaml').inputValue(), /title: Broken/, 'the text is kept to fix');
    await page.fill('#yaml', 'title: DNS to evil\nid: 22222222-3333-4444-8555-666666666666\nlogsource: {product: zeek, service: dns}\ndetection:\n  sel: {query: evil.example}\n  condition: sel\nlevel: low\n');
    await Promise.all([page.waitForURL(/notice=Imported/), page.click('#import button[type=submit]')]);
    assert.match(await page.locator('#rules').innerText(), /DNS to evil/);
    await Promise.all([page.waitForURL(/notice=Rule/), page.click('form[action="/rules/22222222-3333-4444-8555-666666666666/enabled"] button')]);
    const rule = (await (await h.api('rule_admin', '/api/v1/rules/22222222-3333-4444-8555-666666666666')).json()) as { enabled: boolean };
    assert.equal(rule.enabled, false);
    await context.close();
  });

  it('signs in the mesh-less loopback visitor only with a token when loopback administration is off', async () => {
    const context = await h.browser.newContext();
    const page = await context.newPage();
    await page.goto(`${h.url}/`);
    assert.equal(new URL(page.url()).pathname, '/sign-in');
    await signIn(page, h.url, h.tokens.admin);
    assert.match(await page.locator('header nav').innerText(), /Audit trail/);
    await context.close();
  });
});
