import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { Packr } from 'msgpackr';
import * as v from 'valibot';
import { FatalStorageError } from '../../src/log/event-log.js';
import { errorHandler } from '../../src/http/middleware.js';
import { MonitoringSchema } from '../../src/projections/monitoring-settings.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { MONITORING } from '../../src/projections/monitoring.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

const GiB = 1024 ** 3;
const packr = new Packr({ useRecords: false, mapsAsObjects: true });
type AlertJson = { id: string; ruleId: string; status: string; title: string; reviewHistory: Array<{ principal: string; reason: string; to: string }> };
type Detail = { status: string; components: Record<string, Record<string, unknown>> };

async function ingestFrom(t: TestInstance, at: string, id: string): Promise<Response> {
  t.setNow(at);
  return t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id, source: { adapter: 'syslog', instance: 'web-1', recordId: id } })]) });
}

const records = (t: TestInstance, type: string) => [...t.inst.log.read(1)].filter((r) => r.type === type);

describe('a silent source through the API', () => {
  it('raises a vigil.source-silent alert once the scheduled check finds it past its cadence, resolves it when the source reports again, and replays to the same alerts', async () => {
    const t = await startTestInstance({ monitoring: { silence: { floorSeconds: 60, ceilingSeconds: 3600, multiplier: 3 } } });
    try {
      for (const [n, at] of ['10:00:00', '10:00:30', '10:01:00', '10:01:30'].entries()) assert.equal((await ingestFrom(t, `2026-11-22T${at}.000Z`, `web-${n}`)).status, 202);
      const plan = await (await t.request('/api/v1/detection-plan', { token: t.tokens.viewer })).json() as { builtin: Array<{ ruleId: string; state: string; enabled: boolean }> };
      assert.deepEqual(plan.builtin.map((r) => [r.ruleId, r.state, r.enabled]), [['vigil.source-silent', 'ready', true], ['vigil.disk-low', 'ready', true]], 'the built-in detections are in the plan');
      // Time moves through the check's context: within the threshold (3 x 30 s) nothing happens...
      t.setNow('2026-11-22T10:03:00.000Z');
      await t.monitor.check();
      assert.equal(records(t, 'SourceWentSilent').length, 0);
      // ...past it, the source is declared silent and an alert is raised like any other.
      t.setNow('2026-11-22T10:03:31.000Z');
      await t.monitor.check();
      const list = await (await t.request('/api/v1/alerts?rule=vigil.source-silent', { token: t.tokens.analyst })).json() as { alerts: AlertJson[] };
      assert.equal(list.alerts.length, 1);
      const alertId = list.alerts[0]!.id;
      assert.equal(list.alerts[0]!.status, 'open');
      assert.match(list.alerts[0]!.title, /syslog\/web-1 \(last event 2026-11-22T10:01:30.000Z, usual cadence 30 s\)/);
      const detail = await (await t.request('/api/v1/health', { token: t.tokens.admin })).json() as Detail;
      assert.deepEqual(detail.components.sources!.silent, [{ source: 'syslog/web-1', kind: 'source', lastSeenAt: '2026-11-22T10:01:30.000Z', alertId }]);
      assert.equal(detail.components.sources!.status, 'silent');
      assert.equal((await (await t.request('/health')).json() as { status: string }).status, 'ok', '/health stays aggregate: a silent source is not the service failing');

      // The source reports again: its batch runs a check at once (no scheduled check is called here).
      assert.equal((await ingestFrom(t, '2026-11-22T10:10:00.000Z', 'web-back')).status, 202);
      let resolved: AlertJson | undefined;
      for (let i = 0; i < 500 && resolved?.status !== 'dismissed'; i++) {
        await new Promise((r) => setTimeout(r, 10));
        resolved = await (await t.request(`/api/v1/alerts/${alertId}`, { token: t.tokens.analyst })).json() as AlertJson;
      }
      assert.equal(resolved!.status, 'dismissed');
      assert.deepEqual(resolved!.reviewHistory.map((h) => [h.principal, h.to]), [['vigil.source-silent', 'dismissed']]);
      assert.match(resolved!.reviewHistory[0]!.reason, /reported again at 2026-11-22T10:10:00.000Z/);
      assert.deepEqual(((await (await t.request('/api/v1/health', { token: t.tokens.admin })).json()) as Detail).components.sources!.silent, []);

      // Replay folds the logged outcomes: the same alerts and the same monitoring state, without deciding again.
      const live = packr.pack([[...t.inst.writer.models.alerts.alerts.values()], [...t.inst.runtime.state<{ sources: Map<string, unknown> }>(MONITORING).sources]]);
      await t.inst.runtime.rebuild();
      const replayed = packr.pack([[...t.inst.writer.models.alerts.alerts.values()], [...t.inst.runtime.state<{ sources: Map<string, unknown> }>(MONITORING).sources]]);
      assert.deepEqual(packr.unpack(replayed), packr.unpack(live));
    } finally {
      await t.close();
    }
  });
});

describe('disk watermarks through the API', () => {
  it('reports degraded past the low mark, refuses writes with 507 and Retry-After past the flood mark while reads go on, counts the refusals, and writes again once the marks are lowered', async () => {
    const t = await startTestInstance();
    try {
      t.setPeer('127.0.0.1');
      assert.equal((await ingestFrom(t, '2026-11-22T10:00:00.000Z', 'pre-1')).status, 202);
      assert.deepEqual(await (await t.request('/health')).json(), { status: 'ok' });

      t.setSpace({ freeBytes: 5 * GiB / 10, totalBytes: 5 * GiB }); // under the 1 GiB low mark, above the flood mark (256 MiB, 2 %)
      assert.deepEqual(await (await t.request('/health')).json(), { status: 'degraded' });
      await t.monitor.check();
      const lowAlerts = await (await t.request('/api/v1/alerts?rule=vigil.disk-low', { token: t.tokens.analyst })).json() as { alerts: AlertJson[] };
      assert.equal(lowAlerts.alerts.length, 1, 'past the low mark an alert is raised');
      assert.equal((await ingestFrom(t, '2026-11-22T10:00:10.000Z', 'low-1')).status, 202, 'writes go on past the low mark');

      t.setSpace({ freeBytes: 100 * 1024 ** 2, totalBytes: 5 * GiB }); // past the flood mark
      const auditedBefore = records(t, 'ApiRequestAudited').length;
      for (let i = 0; i < 5; i++) {
        const refused = await ingestFrom(t, `2026-11-22T10:01:0${i}.000Z`, `flood-${i}`);
        assert.equal(refused.status, 507);
        assert.equal(refused.headers.get('retry-after'), '30');
        const body = await refused.json() as { error: string; retryAfterSeconds: number };
        assert.match(body.error, /flood mark: writes are refused until space returns/);
        assert.equal(body.retryAfterSeconds, 30);
      }
      assert.equal((await t.request('/api/v1/alerts/nope', { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'dismissed', reason: 'x' }) })).status, 507, 'every write is refused, not only ingest');
      assert.equal((await t.request('/api/v1/events?limit=10', { token: t.tokens.viewer })).status, 200, 'reads go on');
      assert.equal((await t.request('/health')).status, 200);
      assert.deepEqual(await (await t.request('/health')).json(), { status: 'degraded' });
      const detail = await (await t.request('/api/v1/health', { token: t.tokens.admin })).json() as Detail;
      assert.equal(detail.components.disk!.status, 'flood');
      assert.equal(detail.components.disk!.writesRefused, true);
      assert.equal(detail.components.disk!.freeBytes, 100 * 1024 ** 2);
      assert.deepEqual(detail.components.disk!.watermarks, v.parse(MonitoringSchema, {}).disk);
      // Only the two reads were audited one by one (the events and the health detail).
      assert.equal(records(t, 'ApiRequestAudited').length - auditedBefore, 2, 'refused writes leave no audit record each');
      await t.flushRefusals();
      const summary = records(t, 'RequestsRefused').map((r) => r.data as { reason: string; count: number; status: number });
      assert.deepEqual(summary.filter((s) => s.reason === 'disk_full').map((s) => [s.count, s.status]), [[6, 507]], 'one summary counts them');

      // Thresholds lowered at runtime (what SIGHUP does in `vigil serve`): writing resumes, the alert resolves.
      t.reloadMonitoring(v.parse(MonitoringSchema, { disk: { lowFreeBytes: 10 * 1024 ** 2, lowFreePercent: 0, floodFreeBytes: 1024 ** 2, floodFreePercent: 0 } }));
      await t.monitor.check();
      assert.equal((await ingestFrom(t, '2026-11-22T10:02:00.000Z', 'after-1')).status, 202);
      t.reloadMonitoring(v.parse(MonitoringSchema, { silence: { enabled: false }, disk: { lowFreeBytes: 0, lowFreePercent: 0, floodFreeBytes: 0, floodFreePercent: 0 } }));
      const plan = await (await t.request('/api/v1/detection-plan', { token: t.tokens.viewer })).json() as { builtin: Array<{ ruleId: string; enabled: boolean }> };
      assert.deepEqual(plan.builtin.map((r) => [r.ruleId, r.enabled]), [['vigil.source-silent', false], ['vigil.disk-low', false]], 'the plan shows the settings in force');
      assert.deepEqual(await (await t.request('/health')).json(), { status: 'ok' });
      const after = await (await t.request(`/api/v1/alerts/${lowAlerts.alerts[0]!.id}`, { token: t.tokens.analyst })).json() as AlertJson;
      assert.equal(after.status, 'dismissed');
      assert.deepEqual(records(t, 'DiskWatermarkCrossed').map((r) => (r.data as { to: string }).to), ['low', 'ok']);
    } finally {
      await t.close();
    }
  });

  it('shows health in detail to admins only, and nothing but the aggregate on /health', async () => {
    const t = await startTestInstance();
    try {
      assert.equal((await t.request('/api/v1/health', { token: t.tokens.viewer })).status, 403);
      assert.equal((await t.request('/api/v1/health')).status, 401);
      const detail = await (await t.request('/api/v1/health', { token: t.tokens.admin })).json() as Detail;
      assert.deepEqual(Object.keys(detail.components).sort(), ['collectors', 'disk', 'exports', 'readSide', 'sources', 'witnesses', 'writer']);
      assert.deepEqual(detail.components.exports, { status: 'off', destinations: [] }, 'no export configured');
      assert.deepEqual(detail.components.witnesses, { status: 'off', maxAgeSeconds: 900, lastCosignedAt: null, ageSeconds: null, pushed: [] }, 'no witness configured');
      assert.equal(detail.components.writer!.status, 'ok');
      assert.equal(typeof detail.components.readSide!.lag, 'number');
      assert.deepEqual(Object.keys(await (await t.request('/health')).json() as object), ['status']);
    } finally {
      await t.close();
    }
  });
});

describe('a request in flight when the store fails', () => {
  it('is answered 503: the outcome is unknown and retrying with the same event ids is safe', async () => {
    const app = new Hono();
    app.use('*', async (c, next) => { c.set('requestId' as never, 'r1' as never); await next(); });
    app.post('/w', () => { throw new FatalStorageError('log write failed, outcome unknown: ENOSPC'); });
    app.onError(errorHandler(() => {}));
    const res = await app.request('/w', { method: 'POST' });
    assert.equal(res.status, 503);
    const body = await res.json() as { error: string };
    assert.match(body.error, /outcome of this request is unknown/);
    assert.match(body.error, /retrying with the same event ids .* is safe/);
    assert.doesNotMatch(body.error, /ENOSPC/, 'nothing of the storage error itself reaches the client');
  });
});
