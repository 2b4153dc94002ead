import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventOf } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { packState, unpackState } from '../../src/projections/heap-models.js';
import { median, ruleQualityProjection, type RuleQualityState } from '../../src/projections/rule-quality.js';
import { listRuleQuality, qualityAnswer } from '../../src/projections/rule-quality-query.js';
import type { DetectionState } from '../../src/projections/detection.js';

type Disposition = 'true_positive' | 'benign' | 'false_positive';

let seq = 0;
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 10, minute)).toISOString();
const record = (minute: number, e: { type: string; data: unknown }): LogRecord => ({ seq: ++seq, at: at(minute), prev: '', ...e } as LogRecord);

const raised = (minute: number, alertId: string, ruleId: string, title = `Rule ${ruleId}`) =>
  record(minute, eventOf('AlertRaised', {
    alertId, ruleId, groupKey: alertId, title, level: 'high', severity: 8, confidence: 0.7,
    matchReason: { selections: ['sel'], fields: [], keywords: [] }, evidence: [], affectedSystems: [], firstSeen: at(minute), lastSeen: at(minute), tags: [],
  }));
const reviewed = (minute: number, alertId: string, to: 'open' | 'in_review' | 'dismissed', disposition?: Disposition) =>
  record(minute, eventOf('AlertReviewed', {
    alertId, from: 'open', to, reason: 'looked', principal: 'analyst-user', authentication: 'bearer', ...(disposition ? { disposition } : {}),
  }));
const bulk = (minute: number, alertIds: string[], disposition?: Disposition) =>
  record(minute, eventOf('AlertsBulkReviewed', {
    reviews: alertIds.map((alertId) => ({ alertId, from: 'open' as const })), to: 'dismissed', reason: 'scanner', principal: 'analyst-user',
    authentication: 'bearer', ...(disposition ? { disposition } : {}),
  }));

const fold = (records: readonly LogRecord[], from: RuleQualityState = ruleQualityProjection.initial()) =>
  records.reduce((s, r) => ruleQualityProjection.evolve(s, r), from);
const roundTrip = (s: RuleQualityState) => unpackState(ruleQualityProjection, packState(ruleQualityProjection, s));

/** A day's work on two rules: a noisy one dismissed in bulk and a good one, with a re-review. */
const HISTORY: LogRecord[] = [
  raised(0, 'a1', 'noisy'),
  raised(1, 'a2', 'noisy'),
  raised(2, 'a3', 'noisy'),
  raised(3, 'b1', 'good'),
  raised(4, 'b2', 'good'),
  // b1: first looked at 10 minutes after it was raised, then found true positive.
  reviewed(13, 'b1', 'in_review'),
  reviewed(20, 'b1', 'dismissed', 'true_positive'),
  // a1 and a2 dismissed in bulk as false positives 30 and 29 minutes after they were raised.
  bulk(30, ['a1', 'a2'], 'false_positive'),
  // a1 looked at again: benign after all (the latest disposition counts, the first review's time stays).
  reviewed(40, 'a1', 'dismissed', 'benign'),
  // A review of an alert this model never saw raised changes nothing.
  reviewed(41, 'zz', 'dismissed', 'true_positive'),
  raised(42, 'a4', 'noisy'),
  // Two matches of the noisy rule an exception kept from alerting (one match of three events counts once), one of good.
  record(43, eventOf('MatchesExcepted', { matches: [
    { exceptionId: 'exc_1', ruleId: 'noisy', eventIds: ['e1', 'e2', 'e3'], time: at(43) },
    { exceptionId: 'exc_1', ruleId: 'noisy', eventIds: ['e4'], time: at(43) },
    { exceptionId: 'exc_2', ruleId: 'good', eventIds: ['e5'], time: at(43) },
  ] })),
];

describe('the rule quality fold', () => {
  it('counts alerts raised and reviewed, the latest disposition of each, and the median time to first review', () => {
    const s = fold(HISTORY);
    assert.deepEqual(qualityAnswer(s.rules.get('noisy')), {
      alertsRaised: 4,
      alertsReviewed: 2,
      dispositions: { true_positive: 0, benign: 1, false_positive: 1 },
      shares: { true_positive: 0, benign: 0.5, false_positive: 0.5 },
      // 30 and 29 minutes.
      medianTimeToFirstReviewSeconds: 29.5 * 60,
      matchesExcepted: 2,
    });
    assert.deepEqual(qualityAnswer(s.rules.get('good')), {
      alertsRaised: 2,
      alertsReviewed: 1,
      dispositions: { true_positive: 1, benign: 0, false_positive: 0 },
      shares: { true_positive: 1, benign: 0, false_positive: 0 },
      medianTimeToFirstReviewSeconds: 600,
      matchesExcepted: 1,
    });
    assert.equal(s.rules.has('zz'), false);
  });

  it('answers nulls for a rule with no disposition and no review', () => {
    const s = fold([raised(0, 'c1', 'quiet'), reviewed(5, 'c1', 'in_review')]);
    const q = qualityAnswer(s.rules.get('quiet'));
    assert.deepEqual(q.shares, { true_positive: null, benign: null, false_positive: null });
    assert.equal(q.alertsReviewed, 1);
    assert.equal(q.medianTimeToFirstReviewSeconds, 300);
    assert.equal(qualityAnswer(undefined).medianTimeToFirstReviewSeconds, null);
  });

  it('a bulk review without a disposition keeps the one an alert had, and counts as a first review', () => {
    const s = fold([raised(0, 'd1', 'r'), raised(0, 'd2', 'r'), reviewed(1, 'd1', 'in_review', 'benign'), bulk(3, ['d1', 'd2'])]);
    const q = qualityAnswer(s.rules.get('r'));
    assert.deepEqual(q.dispositions, { true_positive: 0, benign: 1, false_positive: 0 });
    assert.deepEqual([q.alertsReviewed, q.medianTimeToFirstReviewSeconds], [2, 120]);
  });

  it('folds to the same state from scratch as after a checkpoint and its restore, at every record', () => {
    const whole = fold(HISTORY);
    for (let cut = 0; cut <= HISTORY.length; cut++) {
      const restored = roundTrip(fold(HISTORY.slice(0, cut)));
      const resumed = fold(HISTORY.slice(cut), restored);
      assert.deepEqual(ruleQualityProjection.snapshot!(resumed), ruleQualityProjection.snapshot!(whole), `cut at ${cut}`);
      assert.deepEqual(qualityAnswer(resumed.rules.get('noisy')), qualityAnswer(whole.rules.get('noisy')));
    }
  });

  it('lists the noisiest first, with a rule that never alerted, and pages by cursor', () => {
    const s = fold([...HISTORY, raised(50, 'e1', 'other'), raised(51, 'e2', 'other'), raised(52, 'e3', 'other'), raised(53, 'e4', 'other'),
      reviewed(54, 'e1', 'dismissed', 'true_positive')]);
    const installed = new Map([['noisy', { compiled: { title: 'Noisy rule' } }], ['silent', { compiled: { title: 'Silent rule' } }]]) as unknown as DetectionState['rules'];
    const all = listRuleQuality(s, installed, 'noisiest', 10)!;
    // noisy and other both raised 4: noisy's false_positive+benign share (1) is above other's (0).
    assert.deepEqual(all.rules.map((r) => [r.ruleId, r.title, r.installed]), [
      ['noisy', 'Noisy rule', true], ['other', 'Rule other', false], ['good', 'Rule good', false], ['silent', 'Silent rule', true],
    ]);
    assert.equal(all.nextCursor, null);
    const first = listRuleQuality(s, installed, 'noisiest', 3)!;
    const second = listRuleQuality(s, installed, 'noisiest', 3, first.nextCursor!)!;
    assert.deepEqual([...first.rules, ...second.rules].map((r) => r.ruleId), all.rules.map((r) => r.ruleId));
    assert.equal(second.nextCursor, null);
    assert.deepEqual(listRuleQuality(s, installed, 'false_positive_share', 10)!.rules.map((r) => r.ruleId), ['noisy', 'other', 'good', 'silent']);
    assert.deepEqual(listRuleQuality(s, installed, 'alerts', 10)!.rules.map((r) => r.ruleId), ['noisy', 'other', 'good', 'silent']);
    // A cursor of another order, or none of ours, is refused.
    assert.equal(listRuleQuality(s, installed, 'alerts', 3, first.nextCursor!), undefined);
    assert.equal(listRuleQuality(s, installed, 'alerts', 3, 'garbage!'), undefined);
  });

  it('takes the median of an even count as the mean of the middle two', () => {
    assert.equal(median([]), null);
    assert.equal(median([5]), 5);
    assert.equal(median([9, 1, 4, 3]), 3.5);
  });
});
