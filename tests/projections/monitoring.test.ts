import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Packr } from 'msgpackr';
import { eventOf } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { GAPS_KEPT } from '../../src/projections/monitoring-cadence.js';
import { SOURCES_WATCHED, monitoringProjection, type MonitoringState } from '../../src/projections/monitoring.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
let seq = 0;
const record = (at: string, e: { type: string; data: unknown }): LogRecord => ({ seq: ++seq, at, type: e.type, data: e.data, prev: '' });
const batch = (at: string, ...instances: string[]) => record(at, eventOf('EventsIngested', { events: instances.map((i, n) => normalizedEvent({ id: `${i}-${at}-${n}`, source: { adapter: 'syslog', instance: i, recordId: String(n) } })) }));
const fold = (records: readonly LogRecord[]): MonitoringState => records.reduce((s, r) => monitoringProjection.evolve(s, r), monitoringProjection.initial());

describe('the monitoring projection', () => {
  it('notes each source once per batch, with the gaps between its batches (bursts under a second are not a cadence)', () => {
    const s = fold([
      batch('2026-11-22T10:00:00.000Z', 'a', 'a', 'b'),
      batch('2026-11-22T10:00:00.400Z', 'a'),
      batch('2026-11-22T10:00:30.000Z', 'a'),
      batch('2026-11-22T10:01:30.000Z', 'a', 'b'),
    ]);
    assert.deepEqual(s.sources.get('syslog/a'), { kind: 'source', lastSeenAt: '2026-11-22T10:01:30.000Z', gaps: [29_600, 60_000] });
    assert.deepEqual(s.sources.get('syslog/b'), { kind: 'source', lastSeenAt: '2026-11-22T10:01:30.000Z', gaps: [90_000] });
  });

  it('keeps the most recent gaps only, and ignores a record older than what it has seen', () => {
    const records = Array.from({ length: GAPS_KEPT + 5 }, (_, i) => batch(new Date(Date.parse('2026-11-22T10:00:00Z') + i * (i + 1) * 1000).toISOString(), 'a'));
    records.push(batch('2026-11-22T09:00:00.000Z', 'a'));
    const a = fold(records).sources.get('syslog/a')!;
    assert.equal(a.gaps.length, GAPS_KEPT);
    assert.equal(a.gaps.at(-1), 2 * (GAPS_KEPT + 4) * 1000);
    assert.notEqual(a.lastSeenAt, '2026-11-22T09:00:00.000Z');
  });

  it('watches collectors under their own key, and Vigil\'s own access records not at all', () => {
    const s = fold([
      record('2026-11-22T10:00:00.000Z', eventOf('CollectorSubmissionAccepted', { collectorId: 'web-01', epoch: 1, sequence: 1, digest: 'd', signature: 's', collectedAt: '2026-11-22T10:00:00Z', facts: [], events: [normalizedEvent({ source: { adapter: 'collector', instance: 'web-01', recordId: '1' } })], result: { collectorId: 'web-01', sequence: 1, graph: { entities: 0, relationships: 0 }, acceptedEvents: 1 } })),
      record('2026-11-22T10:00:01.000Z', eventOf('AccessRecorded', { event: normalizedEvent({ source: { adapter: 'vigil', instance: 'api', recordId: 'r' } }) })),
    ]);
    assert.deepEqual([...s.sources.keys()].sort(), ['collector/web-01', 'collector:web-01']);
    assert.equal(s.sources.get('collector:web-01')!.kind, 'collector');
  });

  it('follows silences and disk levels as the checks logged them, and survives its checkpoint', () => {
    const s = fold([
      batch('2026-11-22T10:00:00.000Z', 'a'),
      record('2026-11-22T11:00:00.000Z', eventOf('SourceWentSilent', { source: 'syslog/a', kind: 'source', lastSeenAt: '2026-11-22T10:00:00.000Z', usualCadenceMs: null, thresholdMs: 3_600_000, alertId: 'alr_s' })),
      record('2026-11-22T11:00:00.000Z', eventOf('SourceWentSilent', { source: 'syslog/unknown', kind: 'source', lastSeenAt: '2026-11-22T10:00:00.000Z', usualCadenceMs: null, thresholdMs: 1, alertId: 'alr_x' })),
      record('2026-11-22T11:00:00.000Z', eventOf('DiskWatermarkCrossed', { from: 'ok', to: 'low', freeBytes: 1, totalBytes: 2, alertId: 'alr_d' })),
      record('2026-11-22T11:01:00.000Z', eventOf('DiskWatermarkCrossed', { from: 'low', to: 'flood', freeBytes: 1, totalBytes: 2 })),
    ]);
    assert.deepEqual(s.sources.get('syslog/a')!.silent, { lastSeenAt: '2026-11-22T10:00:00.000Z', alertId: 'alr_s' });
    assert.equal(s.sources.has('syslog/unknown'), false, 'a silence of a source not watched changes nothing');
    assert.deepEqual(s.disk, { level: 'flood', alertId: 'alr_d' });
    const restored = monitoringProjection.restore!(packr.unpack(packr.pack(monitoringProjection.snapshot!(s))));
    assert.deepEqual(restored, s);
    const resumed = monitoringProjection.evolve(restored, record('2026-11-22T11:02:00.000Z', eventOf('SourceResumed', { source: 'syslog/a', resumedAt: '2026-11-22T11:01:00.000Z', silentSince: '2026-11-22T10:00:00.000Z', alertId: 'alr_s' })));
    assert.equal(resumed.sources.get('syslog/a')!.silent, undefined);
    const ok = monitoringProjection.evolve(resumed, record('2026-11-22T11:03:00.000Z', eventOf('DiskWatermarkCrossed', { from: 'flood', to: 'ok', freeBytes: 2, totalBytes: 2, alertId: 'alr_d' })));
    assert.deepEqual(ok.disk, { level: 'ok' });
  });

  it('watches at most SOURCES_WATCHED sources', () => {
    const many = Array.from({ length: SOURCES_WATCHED + 10 }, (_, i) => `h${i}`);
    const s = fold([batch('2026-11-22T10:00:00.000Z', ...many)]);
    assert.equal(s.sources.size, SOURCES_WATCHED);
  });
});
