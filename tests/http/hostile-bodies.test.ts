import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_JSON_DEPTH } from '../../src/kernel/json/depth.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

/** `[{"a":[{"a":…]}]` nested `depth` containers deep, as text (JSON.stringify cannot write it past a few thousand). */
function deepText(depth: number, leaf = '"x"'): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 === 0 ? '[' : '{"a":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return open + leaf + close;
}

/** Hostile bodies every route that takes a body must answer without a 5xx. */
const BODIES: ReadonlyArray<[string, string | Uint8Array]> = [
  ['nesting 65 deep', deepText(MAX_JSON_DEPTH + 1)],
  ['nesting 100,000 deep', deepText(100_000)],
  ['a 900 KB string', JSON.stringify([{ note: 'x'.repeat(900_000) }])],
  ['an array of 200,000 numbers', JSON.stringify(Array.from({ length: 200_000 }, (_, i) => i))],
  ['duplicate keys', '{"records":[1],"records":[{"a":1,"a":2}],"status":"open","status":"dismissed"}'],
  ['invalid UTF-8', Buffer.concat([Buffer.from('[{"note":"'), Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}]')])],
  ['a lone surrogate escape', '[{"note":"\\ud800"}]'],
  ['an array where an object belongs', '{"records":[[]],"context":[]}'],
];

describe('hostile bodies on every route', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  it('never answers 5xx, whatever the route, body and principal (table over the route table)', async () => {
    const routes = [...new Set(t.app.routes.filter((r) => ['POST', 'PATCH', 'PUT'].includes(r.method)).map((r) => `${r.method} ${r.path}`))];
    assert.ok(routes.length >= 9, routes.join(', '));
    for (const route of routes) {
      const [method, pattern] = route.split(' ') as [string, string];
      const path = pattern.replace(':normalizer', 'syslog-rfc5424').replace(/:[A-Za-z]+/g, 'x');
      for (const [name, body] of BODIES) {
        for (const token of [t.tokens.admin, t.tokens.ingestor, undefined]) {
          const res = await t.request(path, { method, token, body: body as string });
          const text = await res.text();
          assert.ok(res.status < 500, `${route} with ${name}: ${res.status} ${text}`);
          const answer = JSON.parse(text) as { error?: unknown };
          if (res.status >= 400) assert.equal(typeof answer.error, 'string', `${route} with ${name}: an ErrorResponse`);
        }
      }
    }
  });

  it('refuses nesting past the bound with a 400 that names the path, before any handler sees it', async () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 62; i++) deep = { a: deep };
    const tooDeep = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'deep', attributes: { deep } })]) });
    assert.equal(tooDeep.status, 400);
    const body = await tooDeep.json() as { error: string; issues: string[] };
    assert.match(body.error, /nested deeper than 64 levels/);
    assert.match(body.issues[0]!, /^\[0\]\.attributes\.deep\.a\.a/);
    let fits: unknown = 'x';
    for (let i = 0; i < 61; i++) fits = { a: fits };
    const ok = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'fits', attributes: { deep: fits } })]) });
    assert.equal(ok.status, 202, 'exactly 64 levels are accepted');
  });

  it('refuses invalid UTF-8 and names it', async () => {
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: BODIES.find(([n]) => n === 'invalid UTF-8')![1] as string });
    assert.equal(res.status, 400);
    assert.match((await res.json() as { error: string }).error, /not valid UTF-8/);
  });

  it('wants objects, not arrays, for actor, endpoints, service, correlation and attributes', async () => {
    for (const field of ['actor', 'sourceEndpoint', 'destinationEndpoint', 'service', 'correlation', 'attributes']) {
      const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: `arr-${field}`, [field]: [] })]) });
      assert.equal(res.status, 400, field);
      const body = await res.json() as { issues: string[] };
      assert.ok(body.issues.some((i) => i.startsWith(`records[0].${field}:`)), `${field}: ${body.issues.join('; ')}`);
    }
  });

  it('takes a body of exactly the standard limit on the enrollment routes, and refuses one byte more', async () => {
    const limit = t.config.limits.bodyBytes;
    const pad = (n: number) => { const head = '{"collectorId":"c-1","pad":"'; return head + 'x'.repeat(n - head.length - 2) + '"}'; };
    const exact = await t.request('/api/v1/collector/enrollment-tokens', { method: 'POST', token: t.tokens.admin, body: pad(limit) });
    assert.equal(exact.status, 400, 'read and validated, not refused for its size');
    const over = await t.request('/api/v1/collector/enrollment-tokens', { method: 'POST', token: t.tokens.admin, body: pad(limit + 1) });
    assert.equal(over.status, 413);
  });
});
