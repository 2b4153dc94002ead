import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openApiDocument } from '../../src/http/openapi.js';
import { ROUTES } from '../../src/http/route-table.js';
import { startTestInstance, makeEvent, type TestInstance } from '../helpers/instance.js';
import { schemaIssues } from '../helpers/json-schema.js';
import { WEBSHELL_RULE } from '../helpers/event-fixtures.js';
import { enrollCollector, envelopeText, makePayload, submit } from '../collector/helpers.js';

type Doc = Record<string, unknown> & { paths: Record<string, Record<string, { responses: Record<string, Response200> }>> };
type Response200 = { content?: Record<string, { schema: Record<string, unknown> }> };

/** Routes whose success answer this flow does not produce, each with why. */
const NOT_EXERCISED: Readonly<Record<string, string>> = {
  'POST /api/v1/log/checkpoint/cosignatures': 'needs a witness configured and its cosignature; its answer is two fields',
  'POST /api/v1/intel/feeds/{name}/poll': 'needs a configured feed: tests/e2e/intel-feeds.test.ts polls one on vigil serve',
};

/** A recorded answer: the route template it matched, its status, media type and body text. */
interface Answer {
  readonly key: string;
  readonly status: number;
  readonly type: string;
  readonly text: string;
}

const templates = ROUTES.map((r) => ({
  key: `${r.method.toUpperCase()} ${r.path}`,
  method: r.method.toUpperCase(),
  re: new RegExp(`^${r.path.replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/** The route of a request: its method and the template its path matches. */
function routeOf(method: string, url: string): string | undefined {
  const path = new URL(url, 'http://x').pathname;
  return templates.find((t) => t.method === method && t.re.test(path))?.key;
}

/** The schema the document declares for a route's answer of `status` in media type `type`. */
function declared(doc: Doc, key: string, status: number, type: string): Record<string, unknown> | string {
  const [method, path] = key.split(' ') as [string, string];
  const response = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)];
  if (!response) return `${key} declares no ${status} answer`;
  if (!response.content || Object.keys(response.content).length === 0) return `${key} ${status} declares no body`;
  const media = Object.entries(response.content).find(([m]) => m.split(';')[0]!.trim() === type.split(';')[0]!.trim());
  if (!media) return `${key} ${status} answered ${type}, which it does not declare (${Object.keys(response.content).join(', ')})`;
  return media[1].schema;
}

/** The issues of one answer against the document: none when its body is what the route declares. */
function answerIssues(doc: Doc, a: Answer): string[] {
  const schema = declared(doc, a.key, a.status, a.type);
  if (typeof schema === 'string') return [schema];
  if (!a.type.startsWith('application/json')) return schema.type === 'string' ? [] : [`${a.key}: ${a.type} is not a string body`];
  return schemaIssues(JSON.parse(a.text), schema, doc).map((i) => `${a.key} ${a.status}: ${i}`);
}

describe('the OpenAPI document against real answers', () => {
  let t: TestInstance;
  const answers: Answer[] = [];
  const doc = openApiDocument() as Doc;
  before(async () => {
    t = await startTestInstance({}, { builtinRules: true });
    const request = t.request.bind(t);
    // Every answer of the flow is recorded with the route it matched.
    (t as { request: TestInstance['request'] }).request = async (path, init) => {
      const res = await request(path, init);
      const key = routeOf((init?.method ?? 'GET').toUpperCase(), path);
      if (key) answers.push({ key, status: res.status, type: res.headers.get('content-type') ?? '', text: await res.clone().text() });
      return res;
    };
  });
  after(async () => { await t.close(); });

  it('declares a body schema for every success answer', () => {
    const missing = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).flatMap(([method, op]) =>
      Object.entries(op.responses).filter(([s, r]) => s.startsWith('2') && !Object.values(r.content ?? {}).some((c) => c.schema && Object.keys(c.schema).length > 0))
        .map(([s]) => `${method.toUpperCase()} ${path} ${s}`)));
    assert.deepEqual(missing, []);
  });

  it('every success answer of every route is what the document declares', async () => {
    t.setPeer('127.0.0.1');
    const ok = async (res: Promise<Response>, status: number) => {
      const r = await res;
      assert.equal(r.status, status, await r.clone().text());
      return r.headers.get('content-type')?.startsWith('application/json') ? r.json() as Promise<any> : r.text();
    };
    const get = (path: string, token: string) => ok(t.request(path, { token }), 200);
    const json = (method: string, path: string, token: string, body: unknown, status: number) =>
      ok(t.request(path, { method, token, body: JSON.stringify(body) }), status);
    const yaml = { 'content-type': 'application/yaml' };
    const tk = t.tokens;

    await get('/health', tk.viewer);
    await get('/api/v1/me', tk.viewer);
    await ok(t.request('/api/v1/rules', { method: 'POST', token: tk.rule_admin, body: WEBSHELL_RULE, headers: yaml }), 201);
    await json('POST', '/api/v1/rules/bulk', tk.rule_admin, { files: [{ name: 'a.yml', text: WEBSHELL_RULE }, { name: 'b.yml', text: 'title: broken' }] }, 201);
    const http = (host: string, uri: string, sec: number) => ({ ts: 1_795_338_000 + sec, uid: `C${host}${sec}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + sec, 'id.resp_h': host, 'id.resp_p': 80, method: 'PUT', uri, host: 'web' });
    await json('POST', '/api/v1/ingest/network-monitor?logType=http', tk.ingestor, [http('10.0.0.8', '/e.php', 10)], 202);
    await json('POST', '/api/v1/ingest/network-monitor?logType=http', tk.ingestor, [http('10.0.0.9', '/f.php', 11)], 202);
    await ok(t.request('/api/v1/events', { method: 'POST', token: tk.ingestor, body: JSON.stringify([makeEvent({ id: 'e-1' })]), headers: { prefer: 'return=minimal' } }), 202);
    await json('POST', '/api/v1/events', tk.ingestor, [makeEvent({ id: 'e-2' }), makeEvent({ id: 'e-1' })], 202);
    const otlp = { resourceLogs: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'api' } }] }, scopeLogs: [{ logRecords: [{ timeUnixNano: '1795338000000000000', body: { stringValue: 'hello' } }, { body: 7 }] }] }] };
    await json('POST', '/api/v1/otlp/v1/logs', tk.ingestor, otlp, 200);

    const rules = (await get('/api/v1/rules', tk.viewer)).rules as Array<{ id: string }>;
    await get(`/api/v1/rules/${rules[0]!.id}`, tk.viewer);
    await get('/api/v1/rules/11111111-2222-4333-8444-555555555555', tk.viewer);
    await get('/api/v1/detection-plan', tk.viewer);
    await ok(t.request('/api/v1/rules/preview?since=2026-01-01T00:00:00Z', { method: 'POST', token: tk.analyst, body: WEBSHELL_RULE, headers: yaml }), 200);
    await get('/api/v1/rules/11111111-2222-4333-8444-555555555555/preview?since=2026-01-01T00:00:00Z&maxEvents=1', tk.analyst);

    const alerts = (await get('/api/v1/alerts', tk.analyst)).alerts as Array<{ id: string }>;
    assert.ok(alerts.length >= 2, 'the flow raised two alerts');
    const [a, b] = [alerts[0]!.id, alerts[1]!.id];
    await json('PATCH', `/api/v1/alerts/${a}`, tk.analyst, { status: 'in_review', reason: 'checking', disposition: 'true_positive' }, 200);
    await json('PUT', `/api/v1/alerts/${a}/assignee`, tk.analyst, { assignee: 'analyst-user' }, 200);
    await json('PUT', `/api/v1/alerts/${b}/assignee`, tk.analyst, { assignee: null }, 200);
    await json('POST', `/api/v1/alerts/${a}/notes`, tk.analyst, { text: 'seen before' }, 201);
    await json('POST', '/api/v1/alerts/reviews', tk.analyst, { alertIds: [b], status: 'in_review', disposition: 'benign', reason: 'bulk' }, 200);
    await json('POST', '/api/v1/alerts/reviews', tk.analyst, { alertIds: [b], status: 'open', reason: 'again' }, 200);
    await get(`/api/v1/alerts/${a}`, tk.analyst);
    await get(`/api/v1/alerts/${a}/timeline?limit=1`, tk.analyst);
    await get(`/api/v1/alerts/${a}/systems`, tk.analyst);
    await get('/api/v1/alerts?sort=severity&limit=1', tk.analyst);
    const draft = await get(`/api/v1/alerts/${a}/exception-draft`, tk.analyst);
    const terms = { ...draft, reason: 'expected', detection: { sel: { 'id.resp_h': '10.0.0.8' }, condition: 'sel' } };
    await json('POST', '/api/v1/exceptions/preview?since=2026-01-01T00:00:00Z', tk.analyst, terms, 200);
    const exception = await json('POST', '/api/v1/exceptions', tk.analyst, terms, 201);
    const { fromAlertId: _f, ...changed } = terms;
    await json('PUT', `/api/v1/exceptions/${exception.id}`, tk.analyst, { ...changed, ticket: 'CHG-1', comment: 'ticket' }, 200);
    await get(`/api/v1/exceptions/${exception.id}`, tk.analyst);
    await get('/api/v1/exceptions?status=active', tk.viewer);
    await json('POST', `/api/v1/exceptions/${exception.id}/revoke`, tk.analyst, { comment: 'done' }, 200);
    const indicator = { type: 'indicator', spec_version: '2.1', id: 'indicator--1', created: '2026-01-01T00:00:00Z', modified: '2026-01-01T00:00:00Z', pattern_type: 'stix', pattern: "[domain-name:value = 'evil.example']", valid_from: '2026-01-01T00:00:00Z' };
    const unsupported = { ...indicator, id: 'indicator--2', pattern: "[x509-certificate:issuer = 'CN=A']" };
    await json('POST', '/api/v1/intel/bundles?feed=test', tk.rule_admin, { type: 'bundle', id: 'bundle--1', objects: [indicator, unsupported] }, 200);
    await get('/api/v1/intel/feeds', tk.viewer);
    const hunt = await json('POST', '/api/v1/search', tk.viewer, { query: 'class:network_connection', since: '2026-01-01T00:00:00Z', limit: 1 }, 200);
    await json('POST', '/api/v1/search', tk.viewer, { query: 'class:network_connection | stats count() by class', since: '2026-01-01T00:00:00Z' }, 200);
    await t.transparency.make();
    await get(`/api/v1/search/${hunt.id}/proof`, tk.viewer);
    await get('/api/v1/rules/quality', tk.viewer);
    await get('/api/v1/rules/quality?sort=false_positive_share&limit=1', tk.viewer);
    await get(`/api/v1/rules/${rules[0]!.id}`, tk.viewer);

    const first = await json('POST', '/api/v1/incidents', tk.analyst, { alertIds: [a], title: 'Promoted', reason: 'same actor' }, 201);
    const second = await json('POST', '/api/v1/incidents', tk.analyst, { alertIds: [b], title: 'Second', reason: 'another' }, 201);
    await json('PATCH', `/api/v1/incidents/${first.id}`, tk.analyst, { status: 'investigating', reason: 'on it' }, 200);
    await json('PUT', `/api/v1/incidents/${first.id}/assignee`, tk.analyst, { assignee: 'analyst-user' }, 200);
    await json('POST', `/api/v1/incidents/${second.id}/merge`, tk.analyst, { into: first.id, reason: 'same actor' }, 200);
    await json('POST', `/api/v1/incidents/${first.id}/alerts`, tk.analyst, { alertIds: [b], reason: 'again' }, 200);
    await get('/api/v1/incidents', tk.analyst);
    await get(`/api/v1/incidents/${first.id}`, tk.analyst);
    await get(`/api/v1/incidents/${second.id}`, tk.analyst);
    await get(`/api/v1/incidents/${first.id}/alerts`, tk.analyst);
    await get(`/api/v1/incidents/${first.id}/entities`, tk.analyst);
    await get(`/api/v1/incidents/${first.id}/timeline?limit=2`, tk.analyst);

    const key = await enrollCollector(t, 'web-01');
    await ok(submit(t, envelopeText(makePayload('web-01', 1, 2), key)), 202);
    await get('/api/v1/collectors', tk.admin);

    await json('PATCH', '/api/v1/rules/11111111-2222-4333-8444-555555555555', tk.rule_admin, { enabled: false, reason: 'noisy' }, 200);
    await json('PUT', '/api/v1/rules/11111111-2222-4333-8444-555555555555/suppression', tk.rule_admin, { by: ['host'], for: '1h', reason: 'noisy' }, 200);
    await json('DELETE', '/api/v1/rules/11111111-2222-4333-8444-555555555555/suppression', tk.rule_admin, { reason: 'quiet again' }, 200);
    await get('/api/v1/events?limit=2', tk.viewer);
    await get('/api/v1/graph', tk.viewer);
    await get('/api/v1/audit?limit=5', tk.admin);
    await get('/api/v1/credentials', tk.admin);
    await get('/api/v1/exports', tk.admin);
    await get('/api/v1/health', tk.admin);
    await get('/api/v1/console', tk.viewer);
    await get('/api/snapshot', tk.viewer);
    await get('/metrics', tk.admin);
    await t.transparency.make();
    const cp = await get('/api/v1/log/checkpoint', tk.admin);
    await get(`/api/v1/log/proofs/inclusion?seq=1&size=${cp.tree_size}`, tk.admin);
    await get(`/api/v1/log/proofs/consistency?from=1&to=${cp.tree_size}`, tk.admin);
    await get('/api/v1/log/verify', tk.admin);
    await get('/api/v1/log/key-rotations', tk.viewer);

    const issues = answers.filter((x) => x.status >= 200 && x.status < 300).flatMap((x) => answerIssues(doc, x));
    assert.deepEqual(issues, []);
    const answered = new Set(answers.filter((x) => x.status >= 200 && x.status < 300).map((x) => x.key));
    const unexercised = templates.map((x) => x.key).filter((k) => !answered.has(k) && !(k in NOT_EXERCISED));
    assert.deepEqual(unexercised, [], 'every route answered with success, or is listed with a reason');
    assert.deepEqual(Object.keys(NOT_EXERCISED).filter((k) => answered.has(k)), [], 'a listed route the flow exercises is no longer listed');
  });

  it('finds an answer its declared schema does not allow', () => {
    const good = { key: 'GET /api/v1/alerts', status: 200, type: 'application/json', text: JSON.stringify({ alerts: [], nextCursor: null }) };
    assert.deepEqual(answerIssues(doc, good), []);
    assert.match(answerIssues(doc, { ...good, text: JSON.stringify({ alerts: [], nextCursor: null, extra: 1 }) }).join('\n'), /extra is not allowed/);
    assert.match(answerIssues(doc, { ...good, text: JSON.stringify({ alerts: [{ id: 'a' }], nextCursor: null }) }).join('\n'), /alerts\[0\]: missing status/);
    assert.match(answerIssues(doc, { ...good, type: 'text/html' }).join('\n'), /does not declare/);
  });
});
