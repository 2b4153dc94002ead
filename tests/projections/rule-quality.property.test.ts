import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { eventOf } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { packState, unpackState } from '../../src/projections/heap-models.js';
import { ruleQualityProjection, type RuleQualityState } from '../../src/projections/rule-quality.js';
import { qualityAnswer } from '../../src/projections/rule-quality-query.js';

const DISPOSITIONS = ['true_positive', 'benign', 'false_positive'] as const;
const T0 = Date.UTC(2026, 10, 22);

/** One step of an analyst's day: an alert raised, reviewed, or several reviewed at once; `gap` seconds after the last. */
const step = fc.oneof(
  fc.record({ kind: fc.constant('raise' as const), alert: fc.nat(30), rule: fc.nat(4), gap: fc.nat(3600) }),
  fc.record({ kind: fc.constant('review' as const), alert: fc.nat(30), disposition: fc.option(fc.constantFrom(...DISPOSITIONS), { nil: undefined }), gap: fc.nat(3600) }),
  fc.record({ kind: fc.constant('excepted' as const), rules: fc.array(fc.nat(4), { maxLength: 4 }), gap: fc.nat(60) }),
  fc.record({ kind: fc.constant('bulk' as const), alerts: fc.array(fc.nat(30), { maxLength: 8 }), disposition: fc.option(fc.constantFrom(...DISPOSITIONS), { nil: undefined }), gap: fc.nat(3600) }),
);

type Step = typeof step extends fc.Arbitrary<infer S> ? S : never;

function records(steps: readonly Step[]): LogRecord[] {
  let ms = T0;
  return steps.map((s, i) => {
    ms += s.gap * 1000;
    const at = new Date(ms).toISOString();
    const base = { seq: i + 1, at, prev: '' };
    if (s.kind === 'excepted')
      return { ...base, ...eventOf('MatchesExcepted', { matches: s.rules.map((r) => ({ exceptionId: 'exc', ruleId: `r${r}`, eventIds: ['e'], time: at })) }) } as LogRecord;
    const d = s.kind !== 'raise' && s.disposition !== undefined ? { disposition: s.disposition } : {};
    if (s.kind === 'raise')
      return { ...base, ...eventOf('AlertRaised', {
        alertId: `a${s.alert}`, ruleId: `r${s.rule}`, groupKey: 'g', title: 't', level: 'low', severity: 2, confidence: 0.5,
        matchReason: { selections: [], fields: [], keywords: [] }, evidence: [], affectedSystems: [], firstSeen: at, lastSeen: at, tags: [],
      }) } as LogRecord;
    if (s.kind === 'review')
      return { ...base, ...eventOf('AlertReviewed', { alertId: `a${s.alert}`, from: 'open', to: 'dismissed', reason: 'r', principal: 'p', authentication: 'bearer', ...d }) } as LogRecord;
    return { ...base, ...eventOf('AlertsBulkReviewed', {
      reviews: s.alerts.map((a) => ({ alertId: `a${a}`, from: 'open' as const })), to: 'dismissed', reason: 'r', principal: 'p', authentication: 'bearer', ...d,
    }) } as LogRecord;
  });
}

const fold = (rs: readonly LogRecord[], from: RuleQualityState = ruleQualityProjection.initial()) =>
  rs.reduce((s, r) => ruleQualityProjection.evolve(s, r), from);

describe('rule quality over any sequence of raisings and reviews', () => {
  it('never counts below zero, shares sum to 1 when any disposition, the median lies within the review times', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
      const s = fold(records(steps));
      for (const [ruleId, rule] of s.rules) {
        const q = qualityAnswer(rule);
        const counts = [q.alertsRaised, q.alertsReviewed, q.matchesExcepted, ...Object.values(q.dispositions)];
        assert.ok(counts.every((n) => Number.isInteger(n) && n >= 0), `${ruleId}: ${counts}`);
        const total = Object.values(q.dispositions).reduce((a, b) => a + b, 0);
        assert.ok(total <= q.alertsReviewed && q.alertsReviewed <= q.alertsRaised);
        const shares = Object.values(q.shares);
        if (total === 0) assert.ok(shares.every((x) => x === null));
        else assert.ok(Math.abs(shares.reduce((a: number, b) => a + b!, 0) - 1) < 1e-9, `${ruleId}: ${shares}`);
        const times = rule.firstReviewSeconds;
        assert.equal(times.length, q.alertsReviewed);
        if (times.length === 0) assert.equal(q.medianTimeToFirstReviewSeconds, null);
        else {
          const m = q.medianTimeToFirstReviewSeconds!;
          assert.ok(m >= Math.min(...times) && m <= Math.max(...times), `${m} within ${times}`);
        }
      }
    }), { numRuns: 300 });
  });

  it('counts each alert by its latest disposition and each excepted match once, as a model that keeps every alert whole does', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 80 }), (steps) => {
      const ruleOf = new Map<string, string>();
      const latest = new Map<string, string>();
      for (const r of records(steps)) {
        if (r.type === 'AlertRaised') { const d = r.data as { alertId: string; ruleId: string }; if (!ruleOf.has(d.alertId)) ruleOf.set(d.alertId, d.ruleId); }
        const reviews = r.type === 'AlertReviewed' ? [r.data as { alertId: string; disposition?: string }]
          : r.type === 'AlertsBulkReviewed' ? (r.data as { reviews: Array<{ alertId: string }>; disposition?: string }).reviews.map((x) => ({ alertId: x.alertId, disposition: (r.data as { disposition?: string }).disposition })) : [];
        for (const v of reviews) if (ruleOf.has(v.alertId) && v.disposition !== undefined) latest.set(v.alertId, v.disposition);
      }
      const s = fold(records(steps));
      for (const [ruleId, rule] of s.rules)
        for (const d of DISPOSITIONS)
          assert.equal(rule.dispositions[d], [...latest].filter(([a, x]) => x === d && ruleOf.get(a) === ruleId).length);
      const excepted = steps.flatMap((x) => (x.kind === 'excepted' ? x.rules.map((r) => `r${r}`) : []));
      for (const [ruleId, rule] of s.rules) assert.equal(rule.matchesExcepted, excepted.filter((r) => r === ruleId).length);
    }), { numRuns: 300 });
  });

  it('folds to the same state from scratch as after a checkpoint and its restore at any record', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 60 }), fc.nat(60), (steps, at) => {
      const rs = records(steps);
      const cut = Math.min(at, rs.length);
      const restored = unpackState(ruleQualityProjection, packState(ruleQualityProjection, fold(rs.slice(0, cut))));
      const resumed = fold(rs.slice(cut), restored);
      assert.deepEqual(ruleQualityProjection.snapshot!(resumed), ruleQualityProjection.snapshot!(fold(rs)));
    }), { numRuns: 300 });
  });
});
