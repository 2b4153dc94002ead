import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseHunt, printHunt } from '../../src/detection/hunt/index.js';
import { autoSpan, bucketsOf, entitiesQuery, seriesOf, splitPipes, withTerm } from '../../src/http/console/hunt-query.js';
import { ruleIdOf } from '../../src/http/console/pages/hunt-rule.js';
import { Histogram } from '../../src/http/web/components/histogram.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

/** Whether the hunt language is the real one (it prints pipes back) rather than the stub main had first. */
const realLanguage = (() => {
  const p = parseHunt('class:a | top 10 actor.user');
  return p.ok && printHunt(p.query).includes('top');
})();

const since = '2026-11-22T00:00:00.000Z';
const until = '2026-11-22T10:00:00.000Z';

describe('the hunt page over app.request', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const events = Array.from({ length: 12 }, (_, i) => makeEvent({
      id: `h-${i}`, time: `2026-11-22T09:${String(i).padStart(2, '0')}:00Z`,
      category: i % 2 === 0 ? 'identity' : 'network', class: i % 2 === 0 ? 'authentication' : 'network_connection',
      actor: { user: i % 4 === 0 ? 'alice' : 'bob<script>' },
    }));
    const ingest = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(events) });
    assert.equal(ingest.status, 202);
  });
  after(async () => { await t?.close(); });

  const page = (query: Record<string, string>, token = t.tokens.viewer) =>
    t.request(`/hunt?${new URLSearchParams(query)}`, { token, headers: { accept: 'text/html' } });

  it('shows the query bar with its presets, and runs nothing before a query is given', async () => {
    const res = await page({});
    const html = await res.text();
    assert.equal(res.status, 200);
    assert.match(html, /<form[^>]*id="hunt-form"/);
    assert.match(html, /<datalist id="hunt-fields"><option value="[^"]+"/);
    assert.match(html, /<option value="24h" selected="">/, 'the default range is the last 24 hours');
    assert.match(html, /<a href="\/hunt"[^>]*>Hunt<\/a>/, 'the hunt page is in the navigation');
    assert.doesNotMatch(html, /id="hunt-results"/);
  });

  it('runs a query over a range: its events, each expanding to its fields with pivots, and an audited search', async () => {
    const res = await page({ q: 'class:authentication', since, until });
    const html = await res.text();
    assert.equal(res.status, 200, html.slice(0, 500));
    const shown = [...html.matchAll(/<th>id<\/th><td><a class="pivot" href="[^"]*" data-field="id"[^>]*>(h-\d+)</g)].map((m) => m[1]);
    assert.deepEqual(shown, ['h-10', 'h-8', 'h-6', 'h-4', 'h-2', 'h-0'], 'the matching events, newest first');
    assert.ok(!html.includes('bob<script>'), 'event values are escaped');
    assert.ok(html.includes('bob&lt;script&gt;'));
    // A value links to the hunt with its term and-ed to the query.
    const pivot = /<a class="pivot" href="([^"]+)" data-field="actor.user"[^>]*>alice</.exec(html);
    assert.ok(pivot, 'actor.user values pivot');
    const to = new URL(pivot[1]!.replace(/&amp;/g, '&'), 'http://x');
    assert.equal(to.searchParams.get('q'), 'class:authentication and actor.user:"alice"');
    assert.equal(to.searchParams.get('since'), since);
    const narrowed = await (await page(Object.fromEntries(to.searchParams))).text();
    const ids = [...narrowed.matchAll(/data-field="id"[^>]*>(h-\d+)</g)].map((m) => m[1]);
    assert.deepEqual(ids, ['h-8', 'h-4', 'h-0']);
    // The search is a HuntSearched record: its proof names the query and who asked.
    const id = /search (\d+) in the audit trail/.exec(html)?.[1];
    assert.ok(id, 'the page names its search');
    await t.transparency.make();
    const proof = await t.request(`/api/v1/search/${id}/proof`, { token: t.tokens.viewer });
    const p = (await proof.json()) as { search: { query: string; principal: string; since: string } };
    assert.equal(proof.status, 200);
    assert.equal(p.search.query, 'class:authentication');
    assert.equal(p.search.principal, 'viewer-user');
    assert.equal(p.search.since, since);
  });

  it('escapes the query it shows back, and shows where a query that does not parse went wrong', async () => {
    const hostile = 'actor.user:"</script><b>x</b>"';
    const ok = await (await page({ q: hostile, since, until })).text();
    assert.ok(!ok.includes('<b>x</b>'), 'the query is escaped in the page');
    const bad = realLanguage ? 'class:authentication and (' : 'no-colon-here';
    const res = await page({ q: bad, since, until });
    const html = await res.text();
    assert.equal(res.status, 400);
    const err = /<div class="hunt-error[^"]*" id="hunt-error"[^>]*>([\s\S]*?)<\/div>/.exec(html)?.[1] ?? '';
    assert.match(err, /query: /);
    const parsed = parseHunt(bad);
    assert.ok(!parsed.ok);
    const caret = /<pre>[^\n]*\n( *)\^/.exec(err);
    assert.ok(caret, 'a caret under the query');
    assert.equal(caret[1]!.length, Math.min(parsed.error.position, bad.length), 'at the error position');
    assert.ok(err.includes(`expected ${parsed.error.expected.join(', ')}`.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')));
  });

  it('refuses a principal without events:read, as the API would', async () => {
    const res = await page({ q: 'class:authentication' }, t.tokens.console);
    assert.equal(res.status, 403);
  });

  it('turns a query into a Sigma rule in the rule preview, or says why it cannot', async () => {
    // The language asks for the source (its logsource) of what it turns into a rule.
    const q = 'source.adapter:linux-journal and actor.user:alice and class:authentication';
    const res = await t.request(`/hunt/rule?${new URLSearchParams({ q, since, until })}`, { token: t.tokens.analyst, headers: { accept: 'text/html' } });
    const html = await res.text();
    assert.equal(res.status, 200, html.slice(0, 400));
    const yaml = /<textarea id="yaml"[^>]*>([\s\S]*?)<\/textarea>/.exec(html)?.[1] ?? '';
    assert.match(yaml, /alice/);
    assert.match(yaml, new RegExp(`id: ${ruleIdOf(q)}`));
    assert.match(html, /action="\/hunt\/rule\/preview"/);
    assert.doesNotMatch(html, /formaction="\/rules\/import"/, 'an analyst may not import rules');
    const admin = await (await t.request(`/hunt/rule?${new URLSearchParams({ q })}`, { token: t.tokens.admin, headers: { accept: 'text/html' } })).text();
    assert.match(admin, /formaction="\/rules\/import"/, 'a rule administrator may');
    const refused = await t.request(`/hunt/rule?${new URLSearchParams({ q: 'class:authentication | stats count() by actor.user' })}`, { token: t.tokens.analyst, headers: { accept: 'text/html' } });
    assert.equal(refused.status, 400);
    assert.match(await refused.text(), /id="rule-errors"[\s\S]*<li>/);
  });
});

describe('hunt query text', () => {
  it('ands a pivot term to the filter and keeps the pipes', () => {
    assert.equal(withTerm('', 'actor.user', 'alice'), 'actor.user:"alice"');
    assert.equal(withTerm('*', 'a', 'b'), 'a:"b"');
    assert.equal(withTerm('class:x | stats count() by a', 'a', 'q"1\\'), 'class:x and a:"q\\"1\\\\" | stats count() by a');
    assert.equal(withTerm('a:1 or b:2', 'c', '3'), '(a:1 or b:2) and c:"3"');
    assert.equal(withTerm('(a:1 or b:2) and d:"x or y"', 'c', '3'), '(a:1 or b:2) and d:"x or y" and c:"3"');
    assert.equal(withTerm('a:"x | y"', 'c', '3'), 'a:"x | y" and c:"3"');
  });

  it('splits a query at its first pipe outside quotes, whatever the quoted text holds', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (value, rest) => {
      const filter = `f:"${value.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
      assert.deepEqual(splitPipes(`${filter} | ${rest}`), { filter, pipes: `| ${rest}`.trim() });
    }));
  });

  it('draws a bucket per span over the range, counts where the timechart put them', () => {
    const span = autoSpan(Date.parse(since), Date.parse(until));
    assert.equal(span.text, '10m');
    const series = seriesOf(['time', 'count'], [['2026-11-22T09:00:00.000Z', 4], ['2026-11-22T09:10:00.000Z', 2]])!;
    const buckets = bucketsOf(series, Date.parse(since), Date.parse(until), span.ms);
    assert.equal(buckets.length, 61);
    assert.deepEqual(buckets.filter((b) => b[2] > 0).map((b) => [new Date(b[0]).toISOString(), b[2]]), [['2026-11-22T09:00:00.000Z', 4], ['2026-11-22T09:10:00.000Z', 2]]);
    assert.equal(seriesOf(['count'], [[3]]), undefined, 'not a time series');
    fc.assert(fc.property(fc.integer({ min: 0, max: 2e12 }), fc.integer({ min: 1, max: 400 * 86_400_000 }), (s, w) => {
      const { ms } = autoSpan(s, s + w);
      assert.ok(bucketsOf([], s, s + w, ms).length <= 146);
    }));
  });

  it('draws the histogram with a zoom link per bar and the range the script maps a drag onto', () => {
    const html = String(Histogram({ title: 'Matches', buckets: [[0, 60_000, 3], [60_000, 120_000, 0]], sinceMs: 0, untilMs: 120_000, zoomHref: (a, b) => `/hunt?since=${a}&until=${b}` }));
    assert.match(html, /data-since="1970-01-01T00:00:00.000Z" data-until="1970-01-01T00:02:00.000Z"/);
    assert.equal([...html.matchAll(/<a href="\/hunt\?since=1970-01-01T00:00:00.000Z&amp;until=1970-01-01T00:01:00.000Z" class="bar">/g)].length, 1);
    assert.ok(!html.includes('00:02:00.000Z" class="bar"'), 'an empty bucket draws no bar');
  });

  it('hunts an alert\'s or entity\'s systems by their entity keys', () => {
    assert.equal(entitiesQuery(['host:a', 'ip:10.0.0.1']), 'entityKeys:"host:a" or entityKeys:"ip:10.0.0.1"');
  });
});
