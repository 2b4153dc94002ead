import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { BULK_REVIEW_MAX, BulkReviewBody, decideBulkReview, type BulkReview } from '../../src/commands/bulk-review-alerts.js';
import type { CommandContext } from '../../src/commands/decision.js';
import { eventOf } from '../../src/events/union.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { spec } from '../helpers/decider-spec.js';
import { alertRaised, alertReviewed } from '../helpers/event-fixtures.js';

const analyst: CommandContext = { now: '2026-11-22T12:00:00.000Z', actor: { id: 'ana', authentication: 'bearer' } };
const bulk = spec((m, c: BulkReview & { ctx?: CommandContext }) => decideBulkReview(m.alerts, c, c.ctx ?? analyst));
const three = [
  alertRaised({ alertId: 'alr_1', ruleId: 'r-a', severity: 8, lastSeen: '2026-11-22T09:00:01.000Z' }),
  alertRaised({ alertId: 'alr_2', ruleId: 'r-a', groupKey: 'g2', severity: 3, lastSeen: '2026-11-22T09:00:02.000Z' }),
  alertRaised({ alertId: 'alr_3', ruleId: 'r-b', groupKey: 'g3', severity: 9, lastSeen: '2026-11-22T09:00:03.000Z' }),
];

describe('decideBulkReview', () => {
  it('reviews the named alerts in one event, each with the status it had, and each gets its own history entry', () => {
    const { models } = bulk.given([...three, alertReviewed('alr_2', 'open', 'in_review')])
      .when({ alertIds: ['alr_1', 'alr_2'], status: 'dismissed', disposition: 'false_positive', reason: 'scanner of the IT team' })
      .then([eventOf('AlertsBulkReviewed', {
        reviews: [{ alertId: 'alr_1', from: 'open' }, { alertId: 'alr_2', from: 'in_review' }], to: 'dismissed', disposition: 'false_positive',
        reason: 'scanner of the IT team', principal: 'ana', authentication: 'bearer',
      })], { reviewed: 2, status: 'dismissed', disposition: 'false_positive', alertIds: ['alr_1', 'alr_2'] });
    const s = models.alerts;
    for (const id of ['alr_1', 'alr_2']) {
      const a = s.alerts.get(id)!;
      assert.equal(a.status, 'dismissed');
      assert.equal(a.disposition, 'false_positive');
      assert.deepEqual({ ...a.reviewHistory.at(-1)!, at: '', seq: 0 }, { at: '', seq: 0, principal: 'ana', authentication: 'bearer', from: id === 'alr_1' ? 'open' : 'in_review', to: 'dismissed', reason: 'scanner of the IT team', disposition: 'false_positive', bulk: true });
    }
    assert.equal(s.alerts.get('alr_3')!.status, 'open', 'an alert not named is untouched');
  });

  it('reviews every alert that matches a filter, not a page of them, and stores the filter', () => {
    bulk.given(three).when({ filter: { ruleId: 'r-a' }, status: 'in_review', reason: 'triage' })
      .thenAccepts((events, result) => {
        assert.deepEqual(result.alertIds, ['alr_2', 'alr_1']);
        assert.deepEqual((events[0]!.data as { filter: unknown }).filter, { ruleId: 'r-a' });
      });
    bulk.given(three).when({ filter: { minSeverity: 8 }, status: 'dismissed', disposition: 'benign', reason: 'known' })
      .thenAccepts((_, result) => assert.deepEqual(result.alertIds, ['alr_3', 'alr_1']));
  });

  it('filters on the assignee too', () => {
    bulk.given([...three, eventOf('AlertAssigned', { alertId: 'alr_3', to: 'bob', principal: 'ana', authentication: 'bearer' })])
      .when({ filter: { assignee: 'bob' }, status: 'in_review', reason: 'bob looks' })
      .thenAccepts((_, result) => assert.deepEqual(result.alertIds, ['alr_3']));
    bulk.given([...three, eventOf('AlertAssigned', { alertId: 'alr_3', to: 'bob', principal: 'ana', authentication: 'bearer' })])
      .when({ filter: { unassigned: true }, status: 'in_review', reason: 'nobody has these' })
      .thenAccepts((events, result) => {
        assert.deepEqual(result.alertIds, ['alr_2', 'alr_1']);
        assert.deepEqual((events[0]!.data as { filter: unknown }).filter, { unassigned: 'true' });
      });
  });

  it('records nothing when no alert matches the filter', () => {
    bulk.given(three).when({ filter: { ruleId: 'r-none' }, status: 'dismissed', reason: 'x' }).then([], { reviewed: 0, status: 'dismissed', disposition: null, alertIds: [] });
  });

  it(`refuses a filter matching more than ${BULK_REVIEW_MAX} alerts as too large, saying how many matched`, () => {
    const many = Array.from({ length: BULK_REVIEW_MAX + 1 }, (_, i) => alertRaised({ alertId: `alr_${i}`, groupKey: `g${i}` }));
    const r = bulk.given(many).when({ filter: {}, status: 'dismissed', reason: 'x' }).thenRejects('too_large', /matches 10001 alerts.*at most 10000/);
    assert.deepEqual(r.details, { matched: BULK_REVIEW_MAX + 1, limit: BULK_REVIEW_MAX });
  });

  it('refuses unknown alerts as invalid, naming them', () => {
    const r = bulk.given(three).when({ alertIds: ['alr_1', 'alr_x'], status: 'dismissed', reason: 'x' }).thenRejects('invalid', /unknown alerts/);
    assert.deepEqual(r.issues, ['alertIds: alr_x does not exist']);
  });

  it('refuses a review without an authenticated principal', () => {
    bulk.given(three).when({ alertIds: ['alr_1'], status: 'dismissed', reason: 'x', ctx: { now: analyst.now } }).thenRejects('unauthenticated');
  });

  it('takes alertIds or a filter, exactly one, and a known disposition', () => {
    const ok = (b: unknown) => v.safeParse(BulkReviewBody, b).success;
    assert.ok(ok({ alertIds: ['a'], status: 'dismissed', reason: 'r' }));
    assert.ok(ok({ filter: {}, status: 'dismissed', reason: 'r', disposition: 'benign' }));
    assert.ok(!ok({ status: 'dismissed', reason: 'r' }));
    assert.ok(!ok({ alertIds: ['a'], filter: {}, status: 'dismissed', reason: 'r' }));
    assert.ok(!ok({ alertIds: ['a'], status: 'dismissed', reason: 'r', disposition: 'maybe' }));
    assert.ok(!ok({ alertIds: Array.from({ length: BULK_REVIEW_MAX + 1 }, (_, i) => `a${i}`), status: 'dismissed', reason: 'r' }));
  });
});
