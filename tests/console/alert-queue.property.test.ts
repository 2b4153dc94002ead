import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AlertsState, AlertView } from '../../src/projections/alerts.js';
import { matchingAlerts } from '../../src/projections/alerts-query.js';
import { QUEUE_SORTS, queueFilter, queuePage, type QueueParams } from '../../src/http/console/queries/alert-queue.js';

const LEVELS = [['low', 3], ['medium', 5], ['high', 8], ['critical', 10]] as const;

/** An alert from a few varied fields (the rest fixed). */
const alertArb = fc.record({
  level: fc.integer({ min: 0, max: 3 }), status: fc.constantFrom('open', 'in_review', 'dismissed'), rule: fc.constantFrom('r1', 'r2'),
  system: fc.constantFrom('host:a', 'host:b', 'host:c'), minute: fc.integer({ min: 0, max: 30 }), assignee: fc.constantFrom(undefined, 'ana', 'bob'), title: fc.constantFrom('B', 'A', 'C'),
});

function stateOf(rows: ReadonlyArray<{ level: number; status: string; rule: string; system: string; minute: number; assignee: string | undefined; title: string }>): AlertsState {
  const s: AlertsState = { alerts: new Map(), openByKey: new Map(), byKey: new Map(), bySystem: new Map(), systemLinks: 0, incidents: new Map() };
  rows.forEach((r, i) => {
    const [level, severity] = LEVELS[r.level]!;
    const at = `2026-11-22T10:${String(r.minute).padStart(2, '0')}:00.000Z`;
    const a = {
      id: `alr_${String(i).padStart(3, '0')}`, status: r.status, ruleId: r.rule, groupKey: r.system, title: r.title, level, severity, confidence: 0.5,
      matchReason: { selections: [], fields: [], keywords: [] }, evidence: [], evidenceCount: 1, affectedSystems: [r.system], affectedSystemsComplete: true, firstSeen: at, lastSeen: at,
      tags: [], attack: [], reviewHistory: [], assignmentHistory: [], notes: [], ...(r.assignee ? { assignee: r.assignee } : {}),
    } as unknown as AlertView;
    s.alerts.set(a.id, a);
    if (!s.bySystem.has(r.system)) s.bySystem.set(r.system, new Set());
    s.bySystem.get(r.system)!.add(a.id);
  });
  return s;
}

const queryArb: fc.Arbitrary<QueueParams> = fc.record({
  status: fc.constantFrom(undefined, 'open', 'dismissed'), severity: fc.constantFrom(undefined, 'medium', 'high'), rule: fc.constantFrom(undefined, 'r1'),
  entity: fc.constantFrom(undefined, 'host:a'), assignee: fc.constantFrom(undefined, 'ana'), unassigned: fc.constantFrom(undefined, 'true', 'false'),
  sort: fc.constantFrom(undefined, ...QUEUE_SORTS, ...QUEUE_SORTS.map((x) => `-${x}`)),
}, { requiredKeys: [] }) as fc.Arbitrary<QueueParams>;

describe('the alert queue', () => {
  it('pages by cursor through exactly the alerts that match, each once, in the asked order', () => {
    fc.assert(fc.property(fc.array(alertArb, { maxLength: 60 }), queryArb, fc.integer({ min: 1, max: 7 }), (rows, q, limit) => {
      const s = stateOf(rows);
      const seen: AlertView[] = [];
      let cursor: string | undefined;
      let total: number | undefined;
      for (let guard = 0; guard < 100; guard++) {
        const page = queuePage(s, { ...q, ...(cursor ? { cursor } : {}) }, limit);
        assert.ok(page);
        total ??= page.total;
        assert.equal(page.total, total, 'the total is the whole filter, on every page');
        seen.push(...page.alerts);
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      const expected = matchingAlerts(s, queueFilter(q));
      assert.equal(total, expected.length);
      assert.deepEqual(seen.map((a) => a.id).sort(), expected.map((a) => a.id).sort(), 'the same alerts as the API filter');
      assert.equal(new Set(seen.map((a) => a.id)).size, seen.length, 'no alert twice');
      const sort = q.sort ?? '-lastSeen';
      const key = sort.replace(/^-/, '') as keyof AlertView;
      const value = (a: AlertView) => (key === 'assignee' ? (a.assignee ?? '') : a[key]) as string | number;
      for (let i = 1; i < seen.length; i++) {
        const [x, y] = [value(seen[i - 1]!), value(seen[i]!)];
        if (x !== y) assert.ok(sort.startsWith('-') ? x > y : x < y, `ordered by ${sort}`);
      }
    }), { numRuns: 300 });
  });

  it('refuses a cursor of another sort', () => {
    const s = stateOf([{ level: 1, status: 'open', rule: 'r1', system: 'host:a', minute: 1, assignee: undefined, title: 'A' }, { level: 1, status: 'open', rule: 'r1', system: 'host:b', minute: 2, assignee: undefined, title: 'B' }]);
    const first = queuePage(s, { sort: 'title' } as QueueParams, 1)!;
    assert.ok(first.nextCursor);
    assert.equal(queuePage(s, { sort: 'severity', cursor: first.nextCursor } as QueueParams, 1), undefined);
  });
});
