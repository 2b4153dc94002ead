import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { AssignAlertBody, decideAssignAlert } from '../../src/commands/assign-alert.js';
import type { CommandContext } from '../../src/commands/decision.js';
import { eventOf } from '../../src/events/union.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { alertTimeline } from '../../src/projections/alerts-query.js';
import { spec } from '../helpers/decider-spec.js';
import { alertRaised } from '../helpers/event-fixtures.js';

const analyst: CommandContext = { now: '2026-11-22T12:00:00.000Z', actor: { id: 'ana', authentication: 'bearer' } };
type Assign = { alertId?: string; assignee: string | null; reason?: string; ctx?: CommandContext };
const assign = spec((m, c: Assign) => decideAssignAlert(m.alerts, c.alertId ?? 'alr_1', { assignee: c.assignee, ...(c.reason ? { reason: c.reason } : {}) }, c.ctx ?? analyst));
const assigned = (over: { from?: string; to?: string; reason?: string; principal?: string }) =>
  eventOf('AlertAssigned', { alertId: 'alr_1', ...over, principal: over.principal ?? 'ana', authentication: 'bearer' });

describe('decideAssignAlert', () => {
  it('assigns an unassigned alert, recording who assigned it and how they authenticated', () => {
    const { models } = assign.given([alertRaised()]).when({ assignee: 'bob', reason: 'on call' })
      .then([assigned({ to: 'bob', reason: 'on call' })], { id: 'alr_1', assignee: 'bob' });
    const alert = models.alerts.alerts.get('alr_1')!;
    assert.equal(alert.assignee, 'bob');
    assert.deepEqual(alertTimeline(alert).map((e) => [e.kind, e.principal, e.authentication]), [['assignment', 'ana', 'bearer']]);
  });

  it('reassigns, naming the previous assignee', () => {
    assign.given([alertRaised(), assigned({ to: 'bob' })]).when({ assignee: 'ana' }).then([assigned({ from: 'bob', to: 'ana' })]);
  });

  it('unassigns with null, and the alert then has no assignee', () => {
    const { models } = assign.given([alertRaised(), assigned({ to: 'bob' })]).when({ assignee: null }).then([assigned({ from: 'bob' })], { id: 'alr_1', assignee: null });
    assert.ok(!('assignee' in models.alerts.alerts.get('alr_1')!));
  });

  it('records nothing when the alert already has that assignee (PUT is idempotent)', () => {
    assign.given([alertRaised(), assigned({ to: 'bob' })]).when({ assignee: 'bob' }).then([], { id: 'alr_1', assignee: 'bob' });
  });

  it('refuses an alert that does not exist as not found', () => {
    assign.given([alertRaised()]).when({ alertId: 'alr_9', assignee: 'bob' }).thenRejects('not_found', /alr_9/);
  });

  it('refuses an assignment without an authenticated principal', () => {
    assign.given([alertRaised()]).when({ assignee: 'bob', ctx: { now: analyst.now } }).thenRejects('unauthenticated');
  });

  it('takes a principal id of printable text only, and null to unassign', () => {
    assert.ok(v.safeParse(AssignAlertBody, { assignee: null }).success);
    assert.ok(!v.safeParse(AssignAlertBody, { assignee: '' }).success);
    assert.ok(!v.safeParse(AssignAlertBody, { assignee: 'a\nb' }).success);
    assert.ok(!v.safeParse(AssignAlertBody, { assignee: 'x'.repeat(129) }).success);
    assert.ok(!v.safeParse(AssignAlertBody, {}).success, 'the assignee must be stated, even when null');
  });
});
