import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ALERT_SORTS, alertTimeline, incidentAlertsPage, incidentDetail, listAlerts, namesPage, timelinePage, type AlertSort } from '../../src/projections/alerts-query.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { encodeCursor } from '../../src/projections/cursor.js';
import { memoryModels } from '../helpers/decider-spec.js';
import { alertRaised, incidentOpened } from '../helpers/event-fixtures.js';

const alertsArb = fc.uniqueArray(fc.record({
  n: fc.integer({ min: 0, max: 999 }),
  severity: fc.integer({ min: 0, max: 10 }),
  first: fc.integer({ min: 0, max: 20 }),
  last: fc.integer({ min: 20, max: 40 }),
  rule: fc.constantFrom('r1', 'r2'),
}), { selector: (a) => a.n, maxLength: 40 });

const at = (minute: number) => `2026-11-22T09:${String(minute).padStart(2, '0')}:00.000Z`;

function stateOf(alerts: Array<{ n: number; severity: number; first: number; last: number; rule: string }>): AlertsState {
  const m = memoryModels();
  m.append(alerts.map((a) => alertRaised({ alertId: `alr_${a.n}`, groupKey: `g${a.n}`, ruleId: a.rule, severity: a.severity, firstSeen: at(a.first), lastSeen: at(a.last) })));
  return m.alerts;
}

describe('listAlerts paging', () => {
  it('walks every matching alert exactly once, in order, for any sort and page size', () => {
    fc.assert(fc.property(alertsArb, fc.constantFrom(...ALERT_SORTS), fc.integer({ min: 1, max: 7 }), fc.option(fc.constantFrom('r1', 'r2'), { nil: undefined }), (alerts, sort: AlertSort, limit, rule) => {
      const s = stateOf(alerts);
      const filter = rule ? { ruleId: rule } : {};
      const seen: Array<{ id: string; severity: number; firstSeen: string; lastSeen: string }> = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = listAlerts(s, filter, limit, cursor, sort)!;
        assert.ok(page.alerts.length <= limit);
        seen.push(...page.alerts);
        if (page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      const expected = alerts.filter((a) => !rule || a.rule === rule);
      assert.deepEqual(seen.map((a) => a.id).sort(), expected.map((a) => `alr_${a.n}`).sort(), 'each alert once');
      const key = (a: { severity: number; firstSeen: string; lastSeen: string }) => (sort === 'severity' ? a.severity : sort === 'firstSeen' ? a.firstSeen : a.lastSeen);
      for (let i = 1; i < seen.length; i++) assert.ok(key(seen[i - 1]!) >= key(seen[i]!), `descending by ${sort}`);
    }), { numRuns: 200 });
  });

  it('refuses a cursor of another order, and a cursor that is not one of ours', () => {
    const s = stateOf([{ n: 1, severity: 3, first: 1, last: 30, rule: 'r1' }, { n: 2, severity: 5, first: 2, last: 31, rule: 'r1' }]);
    const bySeverity = listAlerts(s, {}, 1, undefined, 'severity')!;
    assert.equal(bySeverity.alerts[0]!.id, 'alr_2');
    assert.equal(listAlerts(s, {}, 1, bySeverity.nextCursor!, 'lastSeen'), undefined);
    assert.equal(listAlerts(s, {}, 1, encodeCursor(['severity', 'x', 'y', 'z']), 'severity'), undefined);
    assert.equal(listAlerts(s, {}, 1, 'not a cursor!', 'firstSeen'), undefined);
    assert.equal(listAlerts(s, {}, 1, bySeverity.nextCursor!, 'severity')!.alerts[0]!.id, 'alr_1');
  });
});

describe('timelinePage paging', () => {
  type Entry = { seq: number; kind: 'review' | 'assignment' | 'note'; id: number };
  // Histories as the alerts model keeps them: each in log order, several entries to a record at times.
  const historyArb = fc.array(fc.record({ seq: fc.integer({ min: 1, max: 30 }), kind: fc.constantFrom('review', 'assignment', 'note') as fc.Arbitrary<Entry['kind']> }), { maxLength: 40 })
    .map((entries) => entries.sort((a, b) => a.seq - b.seq).map((e, id) => ({ ...e, id })));
  const alertOf = (entries: readonly Entry[]) => {
    const base = { at: '2026-11-22T10:00:00.000Z', principal: 'p', authentication: 'bearer' };
    const of = (kind: Entry['kind']) => entries.filter((e) => e.kind === kind);
    return {
      reviewHistory: of('review').map((e) => ({ ...base, seq: e.seq, from: 'open', to: 'open', reason: `r${e.id}` })),
      assignmentHistory: of('assignment').map((e) => ({ ...base, seq: e.seq, reason: `a${e.id}` })),
      notes: of('note').map((e) => ({ ...base, seq: e.seq, noteId: `n${e.id}`, text: `n${e.id}` })),
    } as unknown as Parameters<typeof alertTimeline>[0];
  };
  const walk = (a: Parameters<typeof alertTimeline>[0], limit: number, from?: string) => {
    const seen: unknown[] = [];
    let cursor = from;
    for (;;) {
      const page = timelinePage(alertTimeline(a), limit, cursor)!;
      assert.ok(page.items.length <= limit);
      seen.push(...page.items);
      if (page.nextCursor === null) return seen;
      assert.ok(page.items.length === limit, 'only the last page is short');
      cursor = page.nextCursor;
    }
  };

  it('walks the whole timeline exactly once, in log order, for any page size; and resumes exactly after older entries are gone', () => {
    fc.assert(fc.property(historyArb, fc.integer({ min: 1, max: 9 }), fc.nat(), fc.nat(), (entries, limit, pagesFirst, drop) => {
      const a = alertOf(entries);
      assert.deepEqual(walk(a, limit), alertTimeline(a));
      // A cursor taken some pages in stays exact once retention has dropped entries before it.
      let cursor: string | undefined;
      let before: unknown[] = [];
      for (let p = 0; p < pagesFirst % 4; p++) {
        const page = timelinePage(alertTimeline(a), limit, cursor)!;
        before = [...before, ...page.items];
        if (page.nextCursor === null) return;
        cursor = page.nextCursor;
      }
      const all = alertTimeline(a);
      const cutSeq = all.length === 0 ? 0 : all[Math.min(drop % (before.length + 1), before.length - 1)]?.seq ?? 0;
      const kept = alertOf(entries.filter((e) => e.seq >= cutSeq));
      const rest = walk(kept, limit, cursor);
      assert.deepEqual(rest, all.slice(before.length));
    }), { numRuns: 500 });
    assert.equal(timelinePage(alertTimeline(alertOf([])), 10, encodeCursor(['x', 1])), undefined);
    assert.equal(timelinePage(alertTimeline(alertOf([])), 10, 'not-a-cursor!'), undefined);
  });
});

describe("an incident's paged lists", () => {
  /** Every page of a list, following nextCursor. */
  function walk<T>(page: (cursor?: string) => { items: T[]; nextCursor: string | null }, limit: number): T[] {
    const seen: T[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 200; pages++) {
      const p = page(cursor);
      assert.ok(p.items.length <= limit);
      seen.push(...p.items);
      if (p.nextCursor === null) return seen;
      cursor = p.nextCursor;
    }
    throw new Error('did not end');
  }

  it('walks each incident\'s alerts (most recently seen first) and entities (in the order they joined) exactly once, after alerts moved between incidents', () => {
    const arb = fc.record({
      alerts: fc.uniqueArray(fc.record({ n: fc.integer({ min: 0, max: 999 }), last: fc.integer({ min: 20, max: 40 }), systems: fc.uniqueArray(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 3 }) }), { selector: (a) => a.n, minLength: 1, maxLength: 30 }),
      moved: fc.array(fc.boolean(), { maxLength: 30 }),
      limit: fc.integer({ min: 1, max: 7 }),
    });
    fc.assert(fc.property(arb, ({ alerts, moved, limit }) => {
      const m = memoryModels();
      m.append(alerts.map((a) => alertRaised({ alertId: `alr_${a.n}`, groupKey: `g${a.n}`, lastSeen: at(a.last), affectedSystems: a.systems.map((x) => `ip:10.0.0.${x}`) })));
      const ids = alerts.map((a) => `alr_${a.n}`);
      const toB = ids.filter((_, i) => moved[i] === true);
      m.append([incidentOpened('inc_a', ids), ...(toB.length > 0 ? [incidentOpened('inc_b', toB)] : [])]);
      const s = m.alerts;
      for (const incident of ['inc_a', 'inc_b']) {
        const members = ids.filter((id) => (toB.includes(id) ? 'inc_b' : 'inc_a') === incident);
        if (incident === 'inc_b' && toB.length === 0) continue;
        const lines = walk((c) => incidentAlertsPage(s, incident, limit, c)!, limit);
        assert.deepEqual(lines.map((l) => l.id).sort(), [...members].sort(), `${incident}: each of its alerts once`);
        for (let i = 1; i < lines.length; i++) assert.ok(lines[i - 1]!.lastSeen >= lines[i]!.lastSeen, 'most recently seen first');
        const state = s.incidents.get(incident)!;
        const entities = walk((c) => namesPage(state.entities, limit, c)!, limit);
        assert.deepEqual(entities, state.entities, `${incident}: its entities in order`);
        const detail = incidentDetail(s, incident)!;
        assert.deepEqual(detail.alerts, lines, 'under 200 alerts, the detail shows them all, in the same order');
        assert.deepEqual(detail.totals, { alerts: members.length, entities: state.entities.length, mergedFrom: 0, timeline: state.timeline.length });
      }
      assert.equal(namesPage(s.incidents.get('inc_a')!.entities, limit, encodeCursor('ip:192.0.2.1')), undefined, 'an entity the incident does not have');
      for (const a of alerts) {
        const systems = walk((c) => namesPage(s.alerts.get(`alr_${a.n}`)!.affectedSystems, limit, c)!, limit);
        assert.deepEqual(systems, a.systems.map((x) => `ip:10.0.0.${x}`), 'an alert\'s systems, each once, in order');
      }
    }), { numRuns: 200 });
  });
});
