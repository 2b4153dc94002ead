import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ROLES, type Role } from '../../src/auth/roles.js';
import { isPublic, type Route } from '../../src/http/route.js';
import { ROUTES } from '../../src/http/route-table.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

/** Who may call each route, written from spec 5.2 (not from the code under test); `public` takes no bearer credential. */
const EXPECTED: Record<string, readonly Role[] | 'public'> = {
  'GET /health': 'public',
  // Collector enrollment authenticates with the single-use token in its body, not a bearer credential (spec 4).
  'POST /api/v1/collector/enrollments': 'public',
  'GET /api/v1/me': ROLES,
  'POST /api/v1/events': ['ingestor', 'admin'],
  'POST /api/v1/ingest/{normalizer}': ['ingestor', 'admin'],
  'GET /api/v1/events': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/graph': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'GET /api/v1/audit': ['admin'],
  'POST /api/v1/rules': ['rule_admin', 'admin'],
  'POST /api/v1/rules/bulk': ['rule_admin', 'admin'],
  'GET /api/v1/rules': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'GET /api/v1/rules/quality': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'GET /api/v1/rules/{id}': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'PATCH /api/v1/rules/{id}': ['rule_admin', 'admin'],
  'PUT /api/v1/rules/{id}/suppression': ['rule_admin', 'admin'],
  'DELETE /api/v1/rules/{id}/suppression': ['rule_admin', 'admin'],
  'GET /api/v1/detection-plan': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'GET /api/v1/exceptions': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'POST /api/v1/exceptions': ['analyst', 'rule_admin', 'admin'],
  'POST /api/v1/exceptions/preview': ['analyst', 'rule_admin', 'admin'],
  'GET /api/v1/exceptions/{exceptionId}': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'PUT /api/v1/exceptions/{exceptionId}': ['analyst', 'rule_admin', 'admin'],
  'POST /api/v1/exceptions/{exceptionId}/revoke': ['analyst', 'rule_admin', 'admin'],
  'GET /api/v1/alerts/{alertId}/exception-draft': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'GET /api/v1/intel/feeds': ['viewer', 'analyst', 'rule_admin', 'admin'],
  'POST /api/v1/intel/feeds/{name}/poll': ['rule_admin', 'admin'],
  'POST /api/v1/intel/bundles': ['rule_admin', 'admin'],
  'POST /api/v1/search': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/search/{id}/proof': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/alerts': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/alerts/{alertId}': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/alerts/{alertId}/timeline': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/alerts/{alertId}/systems': ['viewer', 'analyst', 'admin'],
  'PATCH /api/v1/alerts/{alertId}': ['analyst', 'admin'],
  'PUT /api/v1/alerts/{alertId}/assignee': ['analyst', 'admin'],
  'POST /api/v1/alerts/{alertId}/notes': ['analyst', 'admin'],
  'POST /api/v1/alerts/reviews': ['analyst', 'admin'],
  'GET /api/v1/incidents': ['viewer', 'analyst', 'admin'],
  'POST /api/v1/incidents': ['analyst', 'admin'],
  'GET /api/v1/incidents/{id}': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/incidents/{id}/alerts': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/incidents/{id}/entities': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/incidents/{id}/timeline': ['viewer', 'analyst', 'admin'],
  'PATCH /api/v1/incidents/{id}': ['analyst', 'admin'],
  'PUT /api/v1/incidents/{id}/assignee': ['analyst', 'admin'],
  'POST /api/v1/incidents/{id}/merge': ['analyst', 'admin'],
  'POST /api/v1/incidents/{id}/alerts': ['analyst', 'admin'],
  'POST /api/v1/collector/submissions': ['collector', 'admin'],
  'POST /api/v1/collector/enrollment-tokens': ['admin'],
  'GET /api/v1/collectors': ['admin'],
  // Checkpoints and proofs are reads of the log's evidence (spec 5.2 "viewer reads"); adding a witness cosignature is the admin's.
  'GET /api/v1/log/checkpoint': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/log/proofs/inclusion': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/log/proofs/consistency': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/log/key-rotations': ['viewer', 'analyst', 'admin'],
  'POST /api/v1/log/checkpoint/cosignatures': ['admin'],
  // Verifying the whole log costs a walk of it: the operator's, not every reader's.
  'GET /api/v1/log/verify': ['admin'],
  // The raw-log-free console projection: the console role's only read, and every reader's too (spec 5.2).
  'GET /api/v1/console': ['console', 'viewer', 'analyst', 'admin'],
  'GET /api/snapshot': ['console', 'viewer', 'analyst', 'admin'],
  // What leaves the machine, and where, is the operator's to see (docs/export.md).
  'GET /api/v1/exports': ['admin'],
  'POST /api/v1/otlp/v1/logs': ['ingestor', 'admin'],
  // Prometheus scrapes with a viewer credential from a credentials file; the narrow metrics permission is the viewer's and the admin's.
  'GET /metrics': ['viewer', 'admin'],
  // Health in detail is for operators (issue 21); `/health` stays public and aggregate.
  'GET /api/v1/health': ['admin'],
  // A rule preview shows stored events the rule matches: it needs the viewer's event reads.
  'POST /api/v1/rules/preview': ['viewer', 'analyst', 'admin'],
  'GET /api/v1/rules/{id}/preview': ['viewer', 'analyst', 'admin'],
  // Who holds which credential and when it was last used is audit information.
  'GET /api/v1/credentials': ['admin'],
};

const PATHS: Record<string, string> = { 'POST /api/v1/ingest/{normalizer}': '/api/v1/ingest/linux-journal' };

const HEADERS: Record<string, Record<string, string>> = { 'POST /api/v1/rules': { 'content-type': 'application/yaml' } };

const BODIES: Record<string, () => unknown> = {
  'POST /api/v1/rules': () => `title: t\nid: 0d1c9a7e-0000-4000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query: x}, condition: s}\n`,
  'POST /api/v1/rules/bulk': () => ({ files: [{ name: 'r.yml', text: `title: t\nid: 0d1c9a7e-0000-4000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, '0')}\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query: x}, condition: s}\n` }] }),
  'PATCH /api/v1/rules/{id}': () => ({ enabled: true }),
  'PUT /api/v1/rules/{id}/suppression': () => ({ by: ['user'], for: '1h', reason: 'r' }),
  'DELETE /api/v1/rules/{id}/suppression': () => ({ reason: 'r' }),
  'PATCH /api/v1/alerts/{alertId}': () => ({ status: 'in_review', reason: 'looking' }),
  'PUT /api/v1/alerts/{alertId}/assignee': () => ({ assignee: 'someone' }),
  'POST /api/v1/alerts/{alertId}/notes': () => ({ text: 'a note' }),
  'POST /api/v1/alerts/reviews': () => ({ filter: { rule: 'none' }, status: 'in_review', reason: 'looking' }),
  'POST /api/v1/incidents': () => ({ alertIds: ['none'], title: 't', reason: 'r' }),
  'PATCH /api/v1/incidents/{id}': () => ({ status: 'investigating', reason: 'r' }),
  'PUT /api/v1/incidents/{id}/assignee': () => ({ assignee: 'someone' }),
  'POST /api/v1/incidents/{id}/merge': () => ({ into: 'inc_other', reason: 'r' }),
  'POST /api/v1/incidents/{id}/alerts': () => ({ alertIds: ['none'], reason: 'r' }),
  'POST /api/v1/ingest/{normalizer}': () => [{ __REALTIME_TIMESTAMP: String(1_700_000_000_000_000 + Math.floor(Math.random() * 1e9)), MESSAGE: 'hello', _HOSTNAME: 'h1' }],
  'POST /api/v1/events': () => [makeEvent({ id: `m-${Math.random()}` })],
  'POST /api/v1/collector/submissions': () => ({}),
  'POST /api/v1/collector/enrollment-tokens': () => ({ collectorId: 'matrix-01' }),
  'POST /api/v1/collector/enrollments': () => ({}),
  'POST /api/v1/otlp/v1/logs': () => ({ resourceLogs: [] }),
};

const keyOf = (r: Route) => `${r.method.toUpperCase()} ${r.path}`;
const GUARDED = ROUTES.filter((r) => !isPublic(r.permission));

describe('auth matrix: every route x every role x bad credentials', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  const call = (key: string, authorization: string | undefined) => {
    const [method, template] = key.split(' ') as [string, string];
    const path = PATHS[key] ?? template;
    const body = BODIES[key];
    const b = body?.();
    const headers = { ...(HEADERS[key] ?? {}), ...(authorization !== undefined ? { authorization } : {}) };
    return t.request(path, { method, headers, ...(b !== undefined ? { body: typeof b === 'string' ? b : JSON.stringify(b) } : {}) });
  };

  it('has an expectation for every operation of the route table, and none for an operation it lacks', () => {
    assert.deepEqual(ROUTES.map(keyOf).sort(), Object.keys(EXPECTED).sort());
  });

  it('declares public exactly the operations spec 5.2 leaves open', () => {
    for (const r of ROUTES) assert.equal(isPublic(r.permission), EXPECTED[keyOf(r)] === 'public', keyOf(r));
  });

  it('grants exactly the roles of spec 5.2 and answers 403 otherwise', async () => {
    for (const r of GUARDED) {
      const key = keyOf(r);
      const expected = EXPECTED[key];
      assert.ok(Array.isArray(expected), `${key} is guarded but expected public`);
      for (const role of ROLES) {
        const res = await call(key, `Bearer ${t.tokens[role]}`);
        const allowed = expected.includes(role);
        // Past authentication and authorization; a 404 for a placeholder id or a 400 body check is fine.
        if (allowed) assert.ok(![401, 403].includes(res.status) && res.status < 500, `${key} as ${role}: ${res.status} ${await res.text()}`);
        else {
          assert.equal(res.status, 403, `${key} as ${role}`);
          assert.match((await res.json() as { error: string }).error, /lacks the .* permission/);
        }
      }
    }
  });

  it('answers 401 with one body for missing, malformed, unknown, expired and disabled credentials', async () => {
    const bad: Record<string, string | undefined> = {
      missing: undefined,
      malformed: 'Basic dXNlcjpwYXNz',
      empty: 'Bearer ',
      unknown: 'Bearer vgl_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      expired: `Bearer ${t.tokens.expired}`,
      disabled: `Bearer ${t.tokens.disabled}`,
    };
    const bodies = new Set<string>();
    for (const r of GUARDED) {
      const key = keyOf(r);
      for (const [name, header] of Object.entries(bad)) {
        const res = await call(key, header);
        assert.equal(res.status, 401, `${key} with ${name} credentials`);
        assert.equal(res.headers.get('www-authenticate'), 'Bearer');
        bodies.add(await res.text());
      }
    }
    assert.equal(bodies.size, 1, `one 401 body for every failure, got ${[...bodies].join(' | ')}`);
  });

  it('answers the public operations without a bearer credential', async () => {
    for (const r of ROUTES.filter((x) => isPublic(x.permission))) {
      const res = await call(keyOf(r), undefined);
      assert.ok(![401, 403].includes(res.status) && res.status < 500, `${keyOf(r)}: ${res.status} ${await res.text()}`);
    }
  });

  it('leaves /health open and free of internals', async () => {
    const res = await t.request('/health');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok' });
  });
});

describe('loopback administration', () => {
  it('makes a loopback peer without credentials an admin only when enabled and not forwarded', async () => {
    const off = await startTestInstance();
    const on = await startTestInstance({ server: { allowLoopbackAdmin: true } });
    try {
      off.setPeer('127.0.0.1');
      assert.equal((await off.request('/api/v1/me')).status, 401);
      on.setPeer('127.0.0.1');
      const me = await (await on.request('/api/v1/me')).json() as { id: string; roles: string[]; authentication: string };
      assert.deepEqual([me.id, me.roles, me.authentication], ['local-admin', ['admin'], 'loopback']);
      on.setPeer('::ffff:127.0.0.1');
      assert.equal((await on.request('/api/v1/me')).status, 200);
      on.setPeer('127.0.0.1');
      assert.equal((await on.request('/api/v1/me', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 401);
      assert.equal((await on.request('/api/v1/me', { headers: { forwarded: 'for=203.0.113.9' } })).status, 401);
      on.setPeer('192.0.2.10');
      assert.equal((await on.request('/api/v1/me')).status, 401);
      on.setPeer(undefined);
      assert.equal((await on.request('/api/v1/me')).status, 401);
    } finally {
      await off.close();
      await on.close();
    }
  });
});
