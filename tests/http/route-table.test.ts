import { after, before, describe, it } from 'node:test';
import { consoleOperations } from '../../src/http/console/app.js';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { PERMISSIONS, type Permission } from '../../src/auth/roles.js';
import { honoPath, isPublic, route, type Route } from '../../src/http/route.js';
import { ROUTES } from '../../src/http/route-table.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

/** The audit label of every operation as access events and audit records already hold it in stored logs. */
const AUDIT_LABELS: Record<string, string | undefined> = {
  'GET /health': undefined,
  'GET /api/v1/me': 'read_principal',
  'GET /api/v1/graph': 'read_graph',
  'GET /api/v1/audit': 'list_audit',
  'POST /api/v1/events': 'ingest_events',
  'GET /api/v1/events': 'list_events',
  'POST /api/v1/ingest/{normalizer}': 'ingest_raw',
  'POST /api/v1/collector/enrollment-tokens': 'issue_enrollment_token',
  'POST /api/v1/collector/enrollments': 'enroll_collector',
  'POST /api/v1/collector/submissions': 'submit_collector_envelope',
  'GET /api/v1/collectors': 'list_collectors',
  'POST /api/v1/rules': 'import_rules',
  'POST /api/v1/rules/bulk': 'bulk_import_rules',
  'GET /api/v1/rules': 'list_rules',
  'GET /api/v1/rules/quality': 'list_rule_quality',
  'GET /api/v1/rules/{id}': 'read_rule',
  'PATCH /api/v1/rules/{id}': 'set_rule_enabled',
  'PUT /api/v1/rules/{id}/suppression': 'set_rule_suppression',
  'DELETE /api/v1/rules/{id}/suppression': 'clear_rule_suppression',
  'GET /api/v1/detection-plan': 'read_detection_plan',
  'GET /api/v1/exceptions': 'list_exceptions',
  'POST /api/v1/exceptions/preview': 'preview_exception',
  'POST /api/v1/exceptions': 'create_exception',
  'GET /api/v1/exceptions/{exceptionId}': 'read_exception',
  'PUT /api/v1/exceptions/{exceptionId}': 'change_exception',
  'POST /api/v1/exceptions/{exceptionId}/revoke': 'revoke_exception',
  'GET /api/v1/alerts/{alertId}/exception-draft': 'draft_exception',
  'GET /api/v1/intel/feeds': 'list_intel_feeds',
  'POST /api/v1/intel/feeds/{name}/poll': 'poll_intel_feed',
  'POST /api/v1/intel/bundles': 'post_intel_bundle',
  'POST /api/v1/search': 'search_events',
  'GET /api/v1/search/{id}/proof': 'read_search_proof',
  'GET /api/v1/alerts': 'list_alerts',
  'GET /api/v1/alerts/{alertId}': 'read_alert',
  'GET /api/v1/alerts/{alertId}/timeline': 'read_alert_timeline',
  'GET /api/v1/alerts/{alertId}/systems': 'read_alert_systems',
  'PATCH /api/v1/alerts/{alertId}': 'review_alert',
  'PUT /api/v1/alerts/{alertId}/assignee': 'assign_alert',
  'POST /api/v1/alerts/{alertId}/notes': 'add_alert_note',
  'POST /api/v1/alerts/reviews': 'bulk_review_alerts',
  'GET /api/v1/incidents': 'list_incidents',
  'POST /api/v1/incidents': 'promote_incident',
  'GET /api/v1/incidents/{id}': 'read_incident',
  'GET /api/v1/incidents/{id}/alerts': 'read_incident_alerts',
  'GET /api/v1/incidents/{id}/entities': 'read_incident_entities',
  'GET /api/v1/incidents/{id}/timeline': 'read_incident_timeline',
  'PATCH /api/v1/incidents/{id}': 'change_incident_status',
  'PUT /api/v1/incidents/{id}/assignee': 'assign_incident',
  'POST /api/v1/incidents/{id}/merge': 'merge_incident',
  'POST /api/v1/incidents/{id}/alerts': 'add_incident_alerts',
  'GET /api/v1/log/checkpoint': 'read_log_checkpoint',
  'GET /api/v1/log/proofs/inclusion': 'read_log_inclusion_proof',
  'GET /api/v1/log/proofs/consistency': 'read_log_consistency_proof',
  'GET /api/v1/log/key-rotations': 'read_log_key_rotations',
  'POST /api/v1/log/checkpoint/cosignatures': 'cosign_log_checkpoint',
  'GET /api/v1/log/verify': 'verify_log',
  'GET /api/v1/console': 'read_console',
  'GET /api/snapshot': 'read_legacy_snapshot',
  'GET /api/v1/exports': 'list_exports',
  'POST /api/v1/otlp/v1/logs': 'ingest_otlp',
  'GET /metrics': 'read_metrics',
  'GET /api/v1/health': 'read_health_detail',
  'POST /api/v1/rules/preview': 'preview_rules',
  'GET /api/v1/rules/{id}/preview': 'preview_rule',
  'GET /api/v1/credentials': 'list_credentials',
};

const keyOf = (r: Route) => `${r.method.toUpperCase()} ${r.path}`;

// Declarations the type of a route refuses: the build fails if any of these compiles.
void (() => [
  // @ts-expect-error a route must say which permission it needs, or that it is public
  route({ method: 'get', path: '/api/v1/x', operationId: 'x', summary: 'x', audit: 'x', success: { status: 200, description: 'x', schema: v.object({}) }, errors: [], handle: (c) => c.json({}) }),
  // @ts-expect-error a guarded route must name the audit label it records
  route({ method: 'get', path: '/api/v1/x', operationId: 'x', summary: 'x', permission: 'alerts:read', success: { status: 200, description: 'x', schema: v.object({}) }, errors: [], handle: (c) => c.json({}) }),
  // @ts-expect-error a permission is one of the known ones
  route({ method: 'get', path: '/api/v1/x', operationId: 'x', summary: 'x', permission: 'alerts:everything', audit: 'x', success: { status: 200, description: 'x', schema: v.object({}) }, errors: [], handle: (c) => c.json({}) }),
  // @ts-expect-error a write says what its body is
  route({ method: 'post', path: '/api/v1/x', operationId: 'x', summary: 'x', permission: 'alerts:review', audit: 'x', success: { status: 200, description: 'x', schema: v.object({}) }, errors: [], handle: (c) => c.json({}) }),
  // @ts-expect-error a success answer declares its body: a schema or its media types
  route({ method: 'get', path: '/api/v1/x', operationId: 'x', summary: 'x', permission: 'alerts:read', audit: 'x', success: { status: 200, description: 'x' }, errors: [], handle: (c) => c.json({}) }),
  // @ts-expect-error a path placeholder needs a parameter schema
  route({ method: 'get', path: '/api/v1/x/{xId}', operationId: 'x', summary: 'x', permission: 'alerts:read', audit: 'x', success: { status: 200, description: 'x', schema: v.object({}) }, errors: [], handle: (c) => c.json({}) }),
  route({
    method: 'get', path: '/api/v1/x/{xId}', operationId: 'x', summary: 'x', permission: 'alerts:read', audit: 'x', params: v.object({ xId: v.string() }),
    success: { status: 200, description: 'x', schema: v.object({}) }, errors: [],
    handle: (c) => {
      const id: string = c.req.param('xId');
      // @ts-expect-error a parameter the path does not have is not known to be there
      const typo: string = c.req.param('xid');
      return c.json({ id, typo });
    },
  }),
]);

describe('route table', () => {
  it('gives every operation a known permission or an explicit public reason', () => {
    for (const r of ROUTES) {
      if (isPublic(r.permission)) assert.ok(r.permission.public.trim().length > 10, `${keyOf(r)} says why it is public`);
      else assert.ok((PERMISSIONS as readonly string[]).includes(r.permission as Permission), `${keyOf(r)}: ${String(r.permission)}`);
    }
  });

  it('keeps the audit label every operation has written to stored logs', () => {
    assert.deepEqual(Object.fromEntries(ROUTES.map((r) => [keyOf(r), r.audit])), AUDIT_LABELS);
  });

  it('declares each operation once, with its own operationId', () => {
    assert.equal(new Set(ROUTES.map(keyOf)).size, ROUTES.length);
    assert.equal(new Set(ROUTES.map((r) => r.operationId)).size, ROUTES.length);
    const labels = ROUTES.flatMap((r) => (r.audit !== undefined ? [r.audit] : []));
    assert.equal(new Set(labels).size, labels.length);
  });

  it('describes exactly the placeholders of each path template', () => {
    for (const r of ROUTES) {
      const placeholders = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(Object.keys(r.params?.entries ?? {}), placeholders, keyOf(r));
    }
  });

  it('turns path templates into Hono patterns', () => {
    assert.equal(honoPath('/api/v1/alerts/{alertId}'), '/api/v1/alerts/:alertId');
    assert.equal(honoPath('/api/v1/a/{x}/b/{y}'), '/api/v1/a/:x/b/:y');
    assert.equal(honoPath('/health'), '/health');
  });

  describe('registration', () => {
    let t: TestInstance;
    before(async () => { t = await startTestInstance(); });
    after(async () => { await t.close(); });

    it('registers on Hono exactly the operations of the table, besides the request-id middleware', () => {
      const registered = new Set(t.app.routes.map((r) => `${r.method} ${r.path}`));
      assert.ok(registered.delete('ALL /*'), 'the request-id middleware runs on every path');
      for (const op of consoleOperations()) assert.ok(registered.delete(op), `the console's ${op}`);
      assert.deepEqual([...registered].sort(), ROUTES.map((r) => `${r.method.toUpperCase()} ${honoPath(r.path)}`).sort());
    });

    it('guards each operation with the permission and audit label of its entry', async () => {
      const res = await t.request('/api/v1/rules/some-rule', { method: 'PATCH', token: t.tokens.viewer, body: JSON.stringify({ enabled: true }) });
      assert.equal(res.status, 403);
      assert.match((await res.json() as { error: string }).error, /lacks the rules:write permission/);
      const audit = [...t.inst.log.read(1)].filter((rec) => rec.type === 'AccessRecorded').map((rec) => (rec.data as { event: { activity: string; attributes: { route: string } } }).event).at(-1);
      assert.deepEqual([audit?.activity, audit?.attributes.route], ['set_rule_enabled', '/api/v1/rules/{id}']);
    });
  });
});
