import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decidePromoteIncident, decideReviewAlert } from '../../src/commands/review-alert.js';
import type { CommandContext } from '../../src/commands/decision.js';
import { eventOf } from '../../src/events/union.js';
import { incidentIdOf } from '../../src/commands/alerting/alert-facts.js';
import { spec } from '../helpers/decider-spec.js';
import { alertRaised, alertReviewed, incidentOpened } from '../helpers/event-fixtures.js';
import type { AlertsState } from '../../src/projections/alerts.js';

const NOW = '2026-11-22T12:00:00.000Z';
const analyst: CommandContext = { now: NOW, actor: { id: 'analyst-user', authentication: 'bearer' } };
type Status = 'open' | 'in_review' | 'dismissed';
type Review = { alertId: string; status: Status; reason: string; ctx?: CommandContext };
const review = spec((m, c: Review) => decideReviewAlert(m.alerts, c.alertId, { status: c.status, reason: c.reason }, c.ctx ?? analyst));

const reviewed = (from: Status, to: Status, reason: string) =>
  eventOf('AlertReviewed', { alertId: 'alr_1', from, to, reason, principal: 'analyst-user', authentication: 'bearer' });

describe('decideReviewAlert', () => {
  it('moves an open alert into review, recording the principal and how it authenticated', () => {
    review.given([alertRaised()]).when({ alertId: 'alr_1', status: 'in_review', reason: 'checking' })
      .then([reviewed('open', 'in_review', 'checking')], { id: 'alr_1', status: 'in_review' });
  });

  it('takes the from-status from the alert as reviewed so far', () => {
    review.given([alertRaised(), alertReviewed('alr_1', 'open', 'dismissed')]).when({ alertId: 'alr_1', status: 'open', reason: 'it came back' })
      .then([reviewed('dismissed', 'open', 'it came back')]);
  });

  it('allows a review to the status the alert already has (any status may follow any other)', () => {
    review.given([alertRaised()]).when({ alertId: 'alr_1', status: 'open', reason: 'still open' }).then([reviewed('open', 'open', 'still open')]);
  });

  it('refuses an alert that does not exist as not found', () => {
    review.given([alertRaised()]).when({ alertId: 'alr_2', status: 'dismissed', reason: 'x' }).thenRejects('not_found', /alert alr_2 does not exist/);
  });

  it('refuses a review without an authenticated principal', () => {
    review.given([alertRaised()]).when({ alertId: 'alr_1', status: 'dismissed', reason: 'x', ctx: { now: NOW } }).thenRejects('unauthenticated', /principal/);
  });
});

type Promote = { alertIds: string[]; title?: string; ctx?: CommandContext };
const promote = spec((m, c: Promote) => decidePromoteIncident(m.alerts, { alertIds: c.alertIds, title: c.title ?? 'Same actor', reason: 'one campaign' }, c.ctx ?? analyst));
const promotedId = (ids: string[]) => incidentIdOf(`promoted\0${ids.join(',')}\0${NOW}`);

describe('decidePromoteIncident', () => {
  it('opens an incident of the named alerts, promoted by the principal', () => {
    promote.given([alertRaised(), alertRaised({ alertId: 'alr_2' })]).when({ alertIds: ['alr_1', 'alr_2'] })
      .then([eventOf('IncidentOpened', { incidentId: promotedId(['alr_1', 'alr_2']), title: 'Same actor', origin: 'promoted', reason: 'one campaign', alertIds: ['alr_1', 'alr_2'], principal: 'analyst-user', authentication: 'bearer' })],
        { id: promotedId(['alr_1', 'alr_2']), title: 'Same actor', alertIds: ['alr_1', 'alr_2'] });
  });

  it('names each alert once when the command repeats one', () => {
    promote.given([alertRaised()]).when({ alertIds: ['alr_1', 'alr_1'] }).thenAccepts((_, result) => assert.deepEqual(result.alertIds, ['alr_1']));
  });

  it('refuses unknown alerts as invalid, naming each of them', () => {
    const r = promote.given([alertRaised()]).when({ alertIds: ['alr_1', 'alr_x', 'alr_y'] }).thenRejects('invalid', /unknown alerts/);
    assert.deepEqual(r.issues, ['alertIds: alr_x does not exist', 'alertIds: alr_y does not exist']);
  });

  it('gives a second incident of the same alerts at the same time another id', () => {
    const first = promotedId(['alr_1']);
    promote.given([alertRaised(), incidentOpened(first, ['alr_1'])]).when({ alertIds: ['alr_1'] })
      .thenAccepts((_, result) => assert.equal(result.id, `${first}-2`));
  });

  it('leaves the principal out when the context has none', () => {
    promote.given([alertRaised()]).when({ alertIds: ['alr_1'], ctx: { now: NOW } })
      .thenAccepts((events) => assert.ok(!('principal' in (events[0]!.data as object))));
  });
});

describe('decideReviewAlert with a disposition', () => {
  it('records the disposition with the review, and the alert shows the latest one', () => {
    const { models } = spec((m, c: Review & { disposition: 'true_positive' | 'benign' | 'false_positive' }) => decideReviewAlert(m.alerts, c.alertId, { status: c.status, reason: c.reason, disposition: c.disposition }, analyst))
      .given([alertRaised()]).when({ alertId: 'alr_1', status: 'dismissed', reason: 'admin at work', disposition: 'benign' })
      .then([eventOf('AlertReviewed', { alertId: 'alr_1', from: 'open', to: 'dismissed', reason: 'admin at work', principal: 'analyst-user', authentication: 'bearer', disposition: 'benign' })]);
    const a = models.alerts.alerts.get('alr_1')!;
    assert.equal(a.disposition, 'benign');
    assert.equal(a.reviewHistory[0]!.disposition, 'benign');
  });

  it('replays a review stored before dispositions existed: the alert has none', () => {
    const { models } = review.given([alertRaised(), alertReviewed('alr_1', 'open', 'in_review')]).when({ alertId: 'alr_1', status: 'dismissed', reason: 'x' }).then([reviewed('in_review', 'dismissed', 'x')]);
    const a = models.alerts.alerts.get('alr_1')!;
    assert.equal(a.disposition, undefined);
    assert.ok(!('disposition' in a.reviewHistory[0]!));
  });
});
