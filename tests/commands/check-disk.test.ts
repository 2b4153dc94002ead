import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideDiskCheck, type DiskSample } from '../../src/commands/check-disk.js';
import { eventOf, type EventData } from '../../src/events/union.js';
import { DISK_LOW_RULE } from '../../src/commands/system-alerts.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { MONITORING, type MonitoringState } from '../../src/projections/monitoring.js';
import { spec } from '../helpers/decider-spec.js';

const GiB = 1024 ** 3;
type Check = { now: string; sample: DiskSample };
const check = spec((m, c: Check) => decideDiskCheck({ monitoring: m.monitoring, alerts: m.alerts }, c.sample, { now: c.now }));
const low: DiskSample = { level: 'low', freeBytes: GiB / 2, totalBytes: 100 * GiB };
const flood: DiskSample = { level: 'flood', freeBytes: GiB / 8, totalBytes: 100 * GiB };
const ok: DiskSample = { level: 'ok', freeBytes: 50 * GiB, totalBytes: 100 * GiB };

describe('decideDiskCheck', () => {
  it('says nothing while the level is the one last logged', () => {
    check.given([]).when({ now: '2026-11-22T10:00:00.000Z', sample: ok }).then([], 'ok');
  });

  it('logs the crossing of the low mark and raises a vigil.disk-low alert', () => {
    check.given([]).when({ now: '2026-11-22T10:00:00.000Z', sample: low }).thenAccepts((events, level) => {
      assert.equal(level, 'low');
      const crossed = events[0]!.data as EventData<'DiskWatermarkCrossed'>;
      assert.deepEqual({ ...crossed, alertId: undefined }, { from: 'ok', to: 'low', freeBytes: GiB / 2, totalBytes: 100 * GiB, alertId: undefined });
      const raised = events[1]!.data as EventData<'AlertRaised'>;
      assert.equal(raised.alertId, crossed.alertId);
      assert.equal(raised.ruleId, DISK_LOW_RULE);
      assert.match(raised.title, /Store disk space low \(512 MiB free of 102400 MiB\)/);
    });
  });

  it('keeps one alert from low to flood, and resolves it when space returns', () => {
    const first = check.given([]).when({ now: '2026-11-22T10:00:00.000Z', sample: low }).thenAccepts(() => {});
    const alertId = (first.events[0]!.data as EventData<'DiskWatermarkCrossed'>).alertId!;
    check.given(first.events).when({ now: '2026-11-22T10:01:00.000Z', sample: flood })
      .then([eventOf('DiskWatermarkCrossed', { from: 'low', to: 'flood', freeBytes: GiB / 8, totalBytes: 100 * GiB })], 'flood');
    const toFlood = eventOf('DiskWatermarkCrossed', { from: 'low', to: 'flood', freeBytes: GiB / 8, totalBytes: 100 * GiB });
    const { models } = check.given([...first.events, toFlood]).when({ now: '2026-11-22T10:02:00.000Z', sample: ok }).then([
      eventOf('DiskWatermarkCrossed', { from: 'flood', to: 'ok', freeBytes: 50 * GiB, totalBytes: 100 * GiB, alertId }),
      eventOf('AlertReviewed', { alertId, from: 'open', to: 'dismissed', reason: 'free space back above the low mark (51200 MiB free of 102400 MiB)', principal: DISK_LOW_RULE, authentication: 'system' }),
    ], 'ok');
    assert.equal(models.alerts.alerts.get(alertId)!.status, 'dismissed');
    assert.deepEqual(models.monitoring.disk, { level: 'ok' });
  });
});
