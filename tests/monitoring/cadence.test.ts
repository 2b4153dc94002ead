import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { isExpectedQuiet, silenceThresholdMs } from '../../src/projections/monitoring-cadence.js';
import { MonitoringSchema } from '../../src/projections/monitoring-settings.js';
import { diskLevel } from '../../src/services/monitoring/self-monitor.js';
import { ConfigSchema } from '../../src/services/config-schema.js';
import { formatIssues } from '../../src/kernel/issues.js';

const silence = (over: Record<string, unknown>) => v.parse(MonitoringSchema, { silence: over }).silence;
const at = (iso: string) => Date.parse(iso);

describe('quiet hours and expected silences', () => {
  // 2026-11-21 is a Saturday, 2026-11-23 a Monday.
  const overnight = silence({ quietHours: [{ sources: ['syslog/backup-*'], from: '22:00', to: '06:00', days: ['sat'] }] });

  it('run past midnight from the day they start', () => {
    assert.equal(isExpectedQuiet('syslog/backup-1', at('2026-11-21T22:00:00Z'), overnight), true);
    assert.equal(isExpectedQuiet('syslog/backup-1', at('2026-11-22T05:59:59Z'), overnight), true, 'Sunday morning is Saturday night\'s');
    assert.equal(isExpectedQuiet('syslog/backup-1', at('2026-11-22T06:00:00Z'), overnight), false);
    assert.equal(isExpectedQuiet('syslog/backup-1', at('2026-11-21T21:59:59Z'), overnight), false);
    assert.equal(isExpectedQuiet('syslog/backup-1', at('2026-11-23T23:00:00Z'), overnight), false, 'not on a Monday');
    assert.equal(isExpectedQuiet('syslog/web-1', at('2026-11-21T23:00:00Z'), overnight), false, 'only for the sources named');
  });

  it('cover the whole day when from equals to, and apply from `from` until before `until`', () => {
    assert.equal(isExpectedQuiet('a/b', at('2026-11-23T12:34:00Z'), silence({ quietHours: [{ sources: ['*'], from: '00:00', to: '00:00' }] })), true);
    const open = silence({ expectedSilences: [{ sources: ['collector:web-03'], until: '2026-12-01T12:00:00Z' }] });
    assert.equal(isExpectedQuiet('collector:web-03', at('2020-01-01T00:00:00Z'), open), true, 'no `from`: from now on');
    assert.equal(isExpectedQuiet('collector:web-03', at('2026-12-01T12:00:00Z'), open), false);
  });
});

describe('the silence threshold', () => {
  it('is the multiple of the usual cadence, clamped, the fixed one when set, the ceiling before a cadence is learned', () => {
    const s = silence({ floorSeconds: 60, ceilingSeconds: 600, multiplier: 4, minSamples: 2, sources: { 'syslog/db-*': { silentAfterSeconds: 7 } } });
    assert.equal(silenceThresholdMs('syslog/a', [10_000, 10_000], s), 60_000, 'floor');
    assert.equal(silenceThresholdMs('syslog/a', [30_000, 40_000], s), 140_000);
    assert.equal(silenceThresholdMs('syslog/a', [300_000, 300_000], s), 600_000, 'ceiling');
    assert.equal(silenceThresholdMs('syslog/a', [30_000], s), 600_000, 'not learned yet');
    assert.equal(silenceThresholdMs('syslog/db-2', [30_000, 30_000], s), 7_000, 'fixed for the source');
  });

  it('refuses a floor above the ceiling in the configuration, naming the section', () => {
    const r = v.safeParse(ConfigSchema, { monitoring: { silence: { floorSeconds: 600, ceilingSeconds: 60 } } });
    assert.equal(r.success, false);
    assert.match(formatIssues(r.issues!).join('\n'), /monitoring\.silence: floorSeconds must not exceed ceilingSeconds/);
  });
});

describe('disk levels', () => {
  const marks = v.parse(MonitoringSchema, { disk: { lowFreeBytes: 1000, lowFreePercent: 10, floodFreeBytes: 100, floodFreePercent: 0 } }).disk;
  it('are past a mark when either its bytes or its percent is, and a 0 limit is off', () => {
    assert.equal(diskLevel({ freeBytes: 5000, totalBytes: 10_000 }, marks), 'ok');
    assert.equal(diskLevel({ freeBytes: 999, totalBytes: 1_000 }, marks), 'low', 'bytes');
    assert.equal(diskLevel({ freeBytes: 5000, totalBytes: 100_000 }, marks), 'low', 'percent');
    assert.equal(diskLevel({ freeBytes: 99, totalBytes: 100 }, marks), 'flood');
    assert.equal(diskLevel({ freeBytes: 0, totalBytes: 0 }, { ...marks, lowFreeBytes: 0, lowFreePercent: 0, floodFreeBytes: 0 }), 'ok');
  });
});
