import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideAddIncidentAlerts } from '../../src/commands/add-incident-alerts.js';
import { decideAssignIncident } from '../../src/commands/assign-incident.js';
import { decideIncidentStatus } from '../../src/commands/change-incident-status.js';
import type { CommandContext } from '../../src/commands/decision.js';
import { decideMergeIncident } from '../../src/commands/merge-incidents.js';
import { decidePromoteIncident } from '../../src/commands/review-alert.js';
import { correlateIncidents } from '../../src/commands/alerting/incident-correlation.js';
import { eventOf } from '../../src/events/union.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { spec } from '../helpers/decider-spec.js';
import { alertRaised } from '../helpers/event-fixtures.js';
import type { WriteModels } from '../../src/projections/models.js';

const NOW = '2026-11-22T12:00:00.000Z';
const ctx: CommandContext = { now: NOW, actor: { id: 'ana', authentication: 'bearer' } };
const by = { principal: 'ana', authentication: 'bearer' } as const;
type Status = 'open' | 'investigating' | 'contained' | 'closed';

const a1 = alertRaised({ alertId: 'alr_1' });
const a2 = alertRaised({ alertId: 'alr_2', groupKey: 'g2' });
const a3 = alertRaised({ alertId: 'alr_3', groupKey: 'g3' });
const correlated = (id: string, alertIds: string[]) => eventOf('IncidentOpened', { incidentId: id, title: 'Related alerts', origin: 'correlated', reason: 'shared host', alertIds });
const statusChanged = (incidentId: string, from: Status | 'merged', to: Status, reason = 'r') => eventOf('IncidentStatusChanged', { incidentId, from, to, reason, ...by });
const incidents = (m: WriteModels) => m.alerts.incidents;

describe('decideIncidentStatus', () => {
  const change = spec((m, c: { id?: string; status: Status; reason?: string; ctx?: CommandContext }) => decideIncidentStatus(m.alerts, c.id ?? 'inc_a', { status: c.status, reason: c.reason ?? 'r' }, c.ctx ?? ctx));

  it('moves an incident from open to investigating, keeping who, how and why in its timeline', () => {
    const { models } = change.given([a1, correlated('inc_a', ['alr_1'])]).when({ status: 'investigating', reason: 'on it' })
      .then([statusChanged('inc_a', 'open', 'investigating', 'on it')], { id: 'inc_a', status: 'investigating' });
    const i = incidents(models).get('inc_a')!;
    assert.equal(i.status, 'investigating');
    assert.deepEqual(i.timeline.at(-1), { at: '2026-11-22T10:00:00.000Z', what: 'incident open -> investigating: on it', kind: 'status', seq: 3, from: 'open', to: 'investigating', reason: 'on it', ...by });
  });

  it('goes through contained to closed, and may reopen a closed incident', () => {
    change.given([a1, correlated('inc_a', ['alr_1']), statusChanged('inc_a', 'open', 'contained')]).when({ status: 'closed' }).then([statusChanged('inc_a', 'contained', 'closed')]);
    change.given([a1, correlated('inc_a', ['alr_1']), statusChanged('inc_a', 'open', 'closed')]).when({ status: 'open', reason: 'it is back' }).then([statusChanged('inc_a', 'closed', 'open', 'it is back')]);
  });

  it('refuses an unknown incident, a missing principal, and a merged incident (naming where it went)', () => {
    change.given([]).when({ status: 'closed' }).thenRejects('not_found', /inc_a/);
    change.given([a1, correlated('inc_a', ['alr_1'])]).when({ status: 'closed', ctx: { now: NOW } }).thenRejects('unauthenticated');
    const r = change.given([a1, a2, correlated('inc_a', ['alr_1']), correlated('inc_b', ['alr_2']), eventOf('IncidentMerged', { incidentId: 'inc_a', into: 'inc_b', alertIds: ['alr_1'], reason: 'same', ...by })])
      .when({ status: 'closed' }).thenRejects('conflict', /merged into incident inc_b/);
    assert.deepEqual(r.details, { mergedInto: 'inc_b' });
  });
});

describe('decideAssignIncident', () => {
  const assign = spec((m, c: { assignee: string | null }) => decideAssignIncident(m.alerts, 'inc_a', { assignee: c.assignee }, ctx));

  it('assigns and unassigns, in the timeline; the same assignee again records nothing', () => {
    const { models } = assign.given([a1, correlated('inc_a', ['alr_1'])]).when({ assignee: 'bob' })
      .then([eventOf('IncidentAssigned', { incidentId: 'inc_a', to: 'bob', ...by })], { id: 'inc_a', assignee: 'bob' });
    assert.equal(incidents(models).get('inc_a')!.assignee, 'bob');
    const assigned = eventOf('IncidentAssigned', { incidentId: 'inc_a', to: 'bob', ...by });
    assign.given([a1, correlated('inc_a', ['alr_1']), assigned]).when({ assignee: 'bob' }).then([]);
    const { models: m2 } = assign.given([a1, correlated('inc_a', ['alr_1']), assigned]).when({ assignee: null }).then([eventOf('IncidentAssigned', { incidentId: 'inc_a', from: 'bob', ...by })]);
    assert.equal(incidents(m2).get('inc_a')!.assignee, undefined);
  });
});

describe('decideMergeIncident', () => {
  const mergeSpec = spec((m, c: { id?: string; into: string }) => decideMergeIncident(m.alerts, c.id ?? 'inc_a', { into: c.into, reason: 'one intrusion' }, ctx));
  const two = [a1, a2, a3, correlated('inc_a', ['alr_1', 'alr_2']), correlated('inc_b', ['alr_3'])];

  it('moves the alerts into the other incident; the merged one says where it went and both timelines say so', () => {
    const { models } = mergeSpec.given(two).when({ into: 'inc_b' })
      .then([eventOf('IncidentMerged', { incidentId: 'inc_a', into: 'inc_b', alertIds: ['alr_1', 'alr_2'], reason: 'one intrusion', ...by })], { id: 'inc_a', mergedInto: 'inc_b', alertIds: ['alr_1', 'alr_2'] });
    const s = models.alerts;
    const [a, b] = [s.incidents.get('inc_a')!, s.incidents.get('inc_b')!];
    assert.deepEqual([a.status, a.mergedInto, a.alertIds], ['merged', 'inc_b', []]);
    assert.deepEqual([b.status, b.mergedFrom, b.alertIds], ['open', ['inc_a'], ['alr_3', 'alr_1', 'alr_2']]);
    assert.equal(s.alerts.get('alr_1')!.incidentId, 'inc_b');
    assert.equal(a.timeline.at(-1)!.kind, 'merged_into');
    assert.ok(b.timeline.some((e) => e.kind === 'merged_from' && e.from === 'inc_a'));
    assert.ok(!a.timeline.some((e) => e.kind === 'alert_left'), 'one merge entry, not one per alert');
  });

  it('refuses merging into itself, into an unknown incident, from or into a merged one, and into a closed one', () => {
    mergeSpec.given(two).when({ into: 'inc_a' }).thenRejects('invalid', /itself/);
    mergeSpec.given(two).when({ into: 'inc_z' }).thenRejects('invalid', /inc_z does not exist/);
    mergeSpec.given(two).when({ id: 'inc_z', into: 'inc_b' }).thenRejects('not_found', /inc_z/);
    const merged = eventOf('IncidentMerged', { incidentId: 'inc_a', into: 'inc_b', alertIds: ['alr_1', 'alr_2'], reason: 'r', ...by });
    mergeSpec.given([...two, merged]).when({ into: 'inc_b' }).thenRejects('conflict', /inc_a was merged into incident inc_b/);
    mergeSpec.given([...two, merged]).when({ id: 'inc_b', into: 'inc_a' }).thenRejects('conflict', /inc_a was merged into incident inc_b/);
    mergeSpec.given([...two, statusChanged('inc_b', 'open', 'closed')]).when({ into: 'inc_b' }).thenRejects('conflict', /inc_b is closed; reopen it/);
  });
});

describe('promotion of alerts already in an incident (the promotion rule)', () => {
  const promote = spec((m, c: { alertIds: string[] }) => decidePromoteIncident(m.alerts, { alertIds: c.alertIds, title: 'Campaign', reason: 'same actor' }, ctx));
  const add = spec((m, c: { id?: string; alertIds: string[] }) => decideAddIncidentAlerts(m.alerts, c.id ?? 'inc_b', { alertIds: c.alertIds, reason: 'same actor' }, ctx));
  const given = [a1, a2, a3, correlated('inc_a', ['alr_1', 'alr_2']), correlated('inc_b', ['alr_3'])];

  it('moves an alert out of its correlated incident into the new one: no alert is in two incidents', () => {
    const { models, result } = promote.given(given).when({ alertIds: ['alr_1', 'alr_3'] }).thenAccepts((events) => {
      assert.deepEqual(events.map((e) => e.type), ['IncidentOpened', 'IncidentStatusChanged'], 'inc_b, left empty, is closed in the same batch');
      assert.deepEqual(events[1]!.data, { incidentId: 'inc_b', from: 'open', to: 'closed', reason: `all its alerts moved to incident ${(events[0]!.data as { incidentId: string }).incidentId}`, ...by });
    });
    const s = models.alerts;
    assert.deepEqual(s.incidents.get('inc_a')!.alertIds, ['alr_2']);
    assert.equal(s.incidents.get('inc_a')!.status, 'open', 'an incident that keeps alerts stays as it was');
    assert.equal(s.incidents.get('inc_a')!.timeline.at(-1)!.kind, 'alert_left');
    assert.equal(s.incidents.get('inc_b')!.status, 'closed');
    assert.deepEqual(s.incidents.get(result.id)!.alertIds, ['alr_1', 'alr_3']);
    const holders = [...s.incidents.values()].filter((i) => i.alertIds.includes('alr_1'));
    assert.deepEqual(holders.map((i) => i.id), [result.id]);
  });

  it('promotes alerts into an existing incident, moving them from theirs, by the principal', () => {
    const { models } = add.given(given).when({ alertIds: ['alr_1'] })
      .then([eventOf('IncidentAlertsAdded', { incidentId: 'inc_b', alertIds: ['alr_1'], reason: 'same actor', ...by })], { id: 'inc_b', added: ['alr_1'] });
    const s = models.alerts;
    assert.deepEqual([s.incidents.get('inc_a')!.alertIds, s.incidents.get('inc_b')!.alertIds], [['alr_2'], ['alr_3', 'alr_1']]);
    assert.equal(s.incidents.get('inc_b')!.timeline.at(-1)!.principal, 'ana');
  });

  it('records nothing for alerts already in the incident', () => {
    add.given(given).when({ alertIds: ['alr_3'] }).then([], { id: 'inc_b', added: [] });
  });

  it('refuses adding to a closed or merged incident, and unknown alerts', () => {
    add.given([...given, statusChanged('inc_b', 'open', 'closed')]).when({ alertIds: ['alr_1'] }).thenRejects('conflict', /closed; reopen it/);
    add.given([...given, eventOf('IncidentMerged', { incidentId: 'inc_b', into: 'inc_a', alertIds: ['alr_3'], reason: 'r', ...by })]).when({ alertIds: ['alr_1'] }).thenRejects('conflict', /merged into incident inc_a/);
    add.given(given).when({ alertIds: ['alr_x'] }).thenRejects('invalid', /unknown alerts/);
    add.given(given).when({ id: 'inc_z', alertIds: ['alr_1'] }).thenRejects('not_found');
  });
});

describe('correlation and the lifecycle', () => {
  it('does not join a new alert to a closed incident: it opens a new one with the alerts that are not closed away', () => {
    const m = spec((models, _: null) => ({ ok: true as const, events: [], result: models })).given([
      a1, correlated('inc_a', ['alr_1']), statusChanged('inc_a', 'open', 'closed'),
    ]).when(null).thenAccepts(() => {}).result;
    const raised = { ...a2.data, alertId: 'alr_new', affectedSystems: ['ip:10.0.0.1'] };
    const open = correlateIncidents(m.alerts, [raised], { incidentWindowMs: 3_600_000 });
    assert.deepEqual(open.events, [], 'no peer outside a closed incident: nothing to correlate');
    const m2 = spec((models, _: null) => ({ ok: true as const, events: [], result: models })).given([a1, correlated('inc_a', ['alr_1'])]).when(null).thenAccepts(() => {}).result;
    const joined = correlateIncidents(m2.alerts, [raised], { incidentWindowMs: 3_600_000 });
    assert.deepEqual(joined.events.map((e) => e.type), ['IncidentAlertsAdded'], 'while open, it joins');
  });
});
