import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { AlertsState, AlertView } from '../../src/projections/alerts.js';
import { matchingAlerts } from '../../src/projections/alerts-query.js';
import { GROUP_ROWS, groupedQueue } from '../../src/http/console/queries/alert-groups.js';
import { queueFilter, type QueueParams } from '../../src/http/console/queries/alert-queue.js';

const LEVELS = [['low', 3], ['medium', 5], ['high', 8], ['critical', 10]] as const;

const alertArb = fc.record({
  level: fc.integer({ min: 0, max: 3 }), status: fc.constantFrom('open', 'in_review', 'dismissed'), rule: fc.constantFrom('r1', 'r2', 'r3', 'vigil.disk-low'),
  systems: fc.subarray(['host:a', 'host:b', 'host:c', 'ip:10.0.0.1'], { minLength: 1 }), minute: fc.integer({ min: 0, max: 59 }), assignee: fc.constantFrom(undefined, 'ana', 'bob'), key: fc.constantFrom('k1', 'k2', 'k3'),
});

type Row = typeof alertArb extends fc.Arbitrary<infer T> ? T : never;
function stateOf(rows: readonly Row[]): AlertsState {
  const s: AlertsState = { alerts: new Map(), openByKey: new Map(), byKey: new Map(), bySystem: new Map(), systemLinks: 0, incidents: new Map() };
  rows.forEach((r, i) => {
    const [level, severity] = LEVELS[r.level]!;
    const at = `2026-11-22T10:${String(r.minute).padStart(2, '0')}:00.000Z`;
    const a = {
      id: `alr_${String(i).padStart(3, '0')}`, status: r.status, ruleId: r.rule, groupKey: r.key, title: `Rule ${r.rule}`, level, severity, confidence: 0.5,
      matchReason: { selections: [], fields: [], keywords: [] }, evidence: [], evidenceCount: 1, affectedSystems: r.systems, affectedSystemsComplete: true, firstSeen: at, lastSeen: at,
      tags: [], attack: [], reviewHistory: [], assignmentHistory: [], notes: [], ...(r.assignee ? { assignee: r.assignee } : {}),
    } as unknown as AlertView;
    s.alerts.set(a.id, a);
    for (const sys of r.systems) {
      if (!s.bySystem.has(sys)) s.bySystem.set(sys, new Set());
      s.bySystem.get(sys)!.add(a.id);
    }
  });
  return s;
}

const queryArb: fc.Arbitrary<QueueParams> = fc.record({
  status: fc.constantFrom(undefined, 'open', 'dismissed'), severity: fc.constantFrom(undefined, 'medium', 'high'), rule: fc.constantFrom(undefined, 'r1'),
  entity: fc.constantFrom(undefined, 'host:a'), assignee: fc.constantFrom(undefined, 'ana'), unassigned: fc.constantFrom(undefined, 'true', 'false'),
}, { requiredKeys: [] }) as fc.Arbitrary<QueueParams>;

const sourceOf = (ruleId: string) => (ruleId.startsWith('vigil.') ? 'vigil' : ruleId === 'r3' ? 'linux/auth' : 'zeek/http');

describe('the grouped alert queue', () => {
  it('puts every matching alert in exactly one group; the group counts sum to the filtered total, paged or not', () => {
    fc.assert(fc.property(fc.array(alertArb, { maxLength: 80 }), queryArb, fc.integer({ min: 1, max: 3 }), (rows, q, limit) => {
      const s = stateOf(rows);
      const f = queueFilter(q);
      const expected = matchingAlerts(s, f);
      const groups = [];
      let cursor: string | undefined;
      for (let guard = 0; guard < 20; guard++) {
        const page = groupedQueue(s, f, sourceOf, limit, cursor)!;
        assert.equal(page.total, expected.length, 'the total is the whole filter');
        groups.push(...page.groups);
        cursor = page.nextCursor;
        if (!cursor) break;
      }
      assert.equal(new Set(groups.map((g) => g.ruleId)).size, groups.length, 'one group per rule');
      assert.equal(groups.reduce((n, g) => n + g.alerts, 0), expected.length, 'group counts sum to the total');
      for (const g of groups) {
        const mine = expected.filter((a) => a.ruleId === g.ruleId);
        assert.equal(g.alerts, mine.length, 'each alert in the group of its rule, and only there');
        assert.equal(g.severity, Math.max(...mine.map((a) => a.severity)), 'the worst severity');
        assert.equal(g.lastSeen, mine.map((a) => a.lastSeen).sort().at(-1), 'the newest lastSeen');
        assert.equal(g.systems, new Set(mine.flatMap((a) => a.affectedSystems)).size, 'the distinct systems');
        assert.equal(g.groupKeys, new Set(mine.map((a) => a.groupKey)).size);
        assert.deepEqual(g.newest.map((a) => a.id), mine.slice(0, GROUP_ROWS).map((a) => a.id), 'its newest alerts, newest first');
      }
      for (let i = 1; i < groups.length; i++) assert.ok(groups[i - 1]!.severity >= groups[i]!.severity, 'the worst first');
      const facets = groupedQueue(s, f, sourceOf, 0)!.facets;
      for (const facet of [facets.severity, facets.status, facets.assignee, facets.source])
        assert.equal(facet.reduce((n, [, c]) => n + c, 0), expected.length, 'each facet counts every matching alert once');
      assert.equal(facets.rule.reduce((n, [, c]) => n + c, 0), expected.length);
    }), { numRuns: 300 });
  });

  it('refuses a cursor that is not a group cursor', () => {
    const s = stateOf([]);
    assert.equal(groupedQueue(s, {}, sourceOf, 5, 'eyJ4Ijox'), undefined);
  });
});
