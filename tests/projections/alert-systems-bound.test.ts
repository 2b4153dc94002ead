import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventOf } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { SYSTEMS_KEPT_PER_ALERT, SYSTEM_LINKS_KEPT, alertsProjection, systemsKept, type AlertsState } from '../../src/projections/alerts.js';

let seq = 0;
const AT = '2026-11-22T10:00:00.000Z';
const ip = (i: number) => `ip:10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const range = (from: number, count: number) => Array.from({ length: count }, (_, k) => ip(from + k));

const raised = (alertId: string, systems: readonly string[]): LogRecord => ({
  seq: ++seq, at: AT, prev: '',
  ...eventOf('AlertRaised', {
    alertId, ruleId: 'scan', groupKey: systems[0] ?? '-', title: 'Port scan', level: 'medium', severity: 5, confidence: 0.5,
    matchReason: { selections: [], fields: [], keywords: [] }, evidence: [], affectedSystems: [...systems], firstSeen: AT, lastSeen: AT, tags: [],
  }),
});
const grown = (alertId: string, systems: readonly string[]): LogRecord => ({
  seq: ++seq, at: AT, prev: '',
  ...eventOf('AlertEvidenceAdded', { alertId, evidence: [], affectedSystems: [...systems], lastSeen: AT, confidence: 0.6 }),
});
const fold = (records: readonly LogRecord[], from: AlertsState = alertsProjection.initial()): AlertsState => records.reduce((s, r) => alertsProjection.evolve(s, r), from);

describe('the affected systems the alerts model keeps', () => {
  it(`keeps at most ${SYSTEMS_KEPT_PER_ALERT} on one alert, and says when it did not keep one`, () => {
    // One scanner: 64 destinations a record, as detection writes them, past the bound.
    const records = [raised('alr_scan', range(0, 64))];
    for (let from = 64; from < SYSTEMS_KEPT_PER_ALERT; from += 64) records.push(grown('alr_scan', range(from, Math.min(64, SYSTEMS_KEPT_PER_ALERT - from))));
    const full = fold(records);
    const alert = full.alerts.get('alr_scan')!;
    assert.deepEqual([alert.affectedSystems.length, alert.affectedSystemsComplete, full.systemLinks], [SYSTEMS_KEPT_PER_ALERT, true, SYSTEMS_KEPT_PER_ALERT]);
    // Systems it has already: nothing is lost, it stays complete.
    fold([grown('alr_scan', range(0, 64))], full);
    assert.equal(alert.affectedSystemsComplete, true);
    // One more destination is not kept, and not indexed for correlation.
    fold([grown('alr_scan', [ip(SYSTEMS_KEPT_PER_ALERT), ip(5)])], full);
    assert.deepEqual([alert.affectedSystems.length, alert.affectedSystemsComplete, full.systemLinks], [SYSTEMS_KEPT_PER_ALERT, false, SYSTEMS_KEPT_PER_ALERT]);
    assert.equal(full.bySystem.has(ip(SYSTEMS_KEPT_PER_ALERT)), false);
    assert.deepEqual(alert.affectedSystems.slice(0, 3), range(0, 3));
    // Another alert still keeps its own.
    fold([raised('alr_other', [ip(SYSTEMS_KEPT_PER_ALERT), ip(1)])], full);
    assert.deepEqual(full.alerts.get('alr_other')!.affectedSystems, [ip(SYSTEMS_KEPT_PER_ALERT), ip(1)]);
    assert.deepEqual([...full.bySystem.get(ip(1))!].sort(), ['alr_other', 'alr_scan']);
    assert.equal(full.systemLinks, SYSTEMS_KEPT_PER_ALERT + 2);
  });

  it(`keeps at most ${SYSTEM_LINKS_KEPT} links between alerts and systems in all`, () => {
    const s = alertsProjection.initial();
    // As if a million links were kept already (building them would take the test seconds).
    s.systemLinks = SYSTEM_LINKS_KEPT - 3;
    fold([raised('alr_a', range(0, 5))], s);
    const a = s.alerts.get('alr_a')!;
    assert.deepEqual([a.affectedSystems, a.affectedSystemsComplete, s.systemLinks], [range(0, 3), false, SYSTEM_LINKS_KEPT]);
    fold([raised('alr_b', range(0, 1))], s);
    assert.deepEqual([s.alerts.get('alr_b')!.affectedSystems, s.alerts.get('alr_b')!.affectedSystemsComplete], [[], false]);
  });

  it('counts what it keeps as detection predicts it (systemsKept), whichever bound comes first', () => {
    assert.equal(systemsKept(0, 64, 0), 64);
    assert.equal(systemsKept(SYSTEMS_KEPT_PER_ALERT - 10, 64, 0), 10);
    assert.equal(systemsKept(0, 64, SYSTEM_LINKS_KEPT - 7), 7);
    assert.equal(systemsKept(SYSTEMS_KEPT_PER_ALERT, 1, 0), 0);
    assert.equal(systemsKept(0, 5, SYSTEM_LINKS_KEPT), 0);
  });

  it('keeps the same systems folded in one go or restored from a checkpoint on the way', () => {
    const records = [raised('alr_x', range(0, 64)), raised('alr_y', range(32, 64))];
    for (let from = 64; from < SYSTEMS_KEPT_PER_ALERT + 500; from += 64) records.push(grown('alr_x', range(from, 64)), grown('alr_y', range(from - 16, 64)));
    const whole = fold(records);
    const cut = 100;
    const restored = alertsProjection.restore!(structuredClone(alertsProjection.snapshot!(fold(records.slice(0, cut))))) as AlertsState;
    const resumed = fold(records.slice(cut), restored);
    assert.equal(resumed.systemLinks, whole.systemLinks);
    assert.deepEqual(resumed.alerts, whole.alerts);
    assert.deepEqual(resumed.bySystem, whole.bySystem);
    assert.deepEqual([whole.alerts.get('alr_x')!.affectedSystemsComplete, whole.alerts.get('alr_x')!.affectedSystems.length], [false, SYSTEMS_KEPT_PER_ALERT]);
  });
});
