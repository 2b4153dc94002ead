import type {
  IncidentAlertsAdded,
  IncidentAssigned,
  IncidentMerged,
  IncidentOpened,
  IncidentStatusChanged,
} from '../events/detection-records.js';
import type { AlertsState, AlertView, IncidentView } from './alerts.js';

// How incident records fold into the alerts projection's state (src/projections/alerts.ts).

/** Who did something to an incident, as its timeline records it. */
interface By {
  principal?: string | undefined;
  authentication?: string | undefined;
}
const byOf = (b: By) => ({
  ...(b.principal !== undefined ? { principal: b.principal } : {}),
  ...(b.authentication !== undefined ? { authentication: b.authentication } : {}),
});

/**
 * Takes an alert out of the incident it is in (an alert is in one incident at most); the incident's timeline says where
 * it went.
 */
function detach(s: AlertsState, alert: AlertView, to: string, at: string, seq: number, by: By): void {
  const from = alert.incidentId !== undefined ? s.incidents.get(alert.incidentId) : undefined;
  if (!from || from.id === to) return;
  from.alertIds = from.alertIds.filter((id) => id !== alert.id);
  from.timeline.push({
    at,
    what: `alert moved to incident ${to}: ${alert.title}`,
    kind: 'alert_left',
    seq,
    alertId: alert.id,
    to,
    ...byOf(by),
  });
}

// An incident's entities as a set, for membership tests (an incident over a busy network collects
// thousands). A memo only: rebuilt whenever the list has changed size behind its back.
const entitySets = new WeakMap<IncidentView, Set<string>>();
function entitySet(incident: IncidentView): Set<string> {
  let set = entitySets.get(incident);
  if (!set || set.size !== incident.entities.length) {
    set = new Set(incident.entities);
    entitySets.set(incident, set);
  }
  return set;
}

function attach(
  s: AlertsState,
  incident: IncidentView,
  alertIds: readonly string[],
  at: string,
  seq: number,
  reason: string,
  by: By = {},
): void {
  const entities = entitySet(incident);
  for (const id of alertIds) {
    const alert = s.alerts.get(id);
    // An alert is in an incident's list exactly when its incidentId names it: look at the list only then.
    if (!alert || (alert.incidentId === incident.id && incident.alertIds.includes(id))) continue;
    detach(s, alert, incident.id, at, seq, by);
    incident.alertIds.push(id);
    alert.incidentId = incident.id;
    for (const sys of alert.affectedSystems) {
      if (entities.has(sys)) continue;
      incident.entities.push(sys);
      entities.add(sys);
    }
    if (alert.firstSeen < incident.firstSeen) incident.firstSeen = alert.firstSeen;
    if (alert.lastSeen > incident.lastSeen) incident.lastSeen = alert.lastSeen;
    incident.timeline.push({
      at,
      what: `alert joined: ${alert.title} (${reason})`,
      kind: 'alert_joined',
      seq,
      alertId: id,
      reason,
      ...byOf(by),
    });
  }
}

/** An incident's lifecycle step. */
export function changeStatus(s: AlertsState, d: IncidentStatusChanged, at: string, seq: number): void {
  const incident = s.incidents.get(d.incidentId);
  if (!incident) return;
  incident.status = d.to;
  incident.timeline.push({
    at,
    what: `incident ${d.from} -> ${d.to}: ${d.reason}`,
    kind: 'status',
    seq,
    from: d.from,
    to: d.to,
    reason: d.reason,
    principal: d.principal,
    authentication: d.authentication,
  });
}

/** An incident's assignee set or cleared. */
export function assignIncident(s: AlertsState, d: IncidentAssigned, at: string, seq: number): void {
  const incident = s.incidents.get(d.incidentId);
  if (!incident) return;
  if (d.to !== undefined) incident.assignee = d.to;
  else delete incident.assignee;
  incident.timeline.push({
    at,
    what: d.to !== undefined ? `assigned to ${d.to}` : 'unassigned',
    kind: 'assignment',
    seq,
    principal: d.principal,
    authentication: d.authentication,
    ...(d.from !== undefined ? { from: d.from } : {}),
    ...(d.to !== undefined ? { to: d.to } : {}),
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
  });
}

/** One incident merged into another: its alerts move, it becomes `merged`. */
export function merge(s: AlertsState, d: IncidentMerged, at: string, seq: number): void {
  const source = s.incidents.get(d.incidentId);
  const target = s.incidents.get(d.into);
  if (!source || !target) return;
  const by = { principal: d.principal, authentication: d.authentication };
  const from = source.status;
  source.status = 'merged';
  source.mergedInto = target.id;
  target.mergedFrom.push(source.id);
  // The merged incident keeps its timeline and says where its alerts went, once.
  const moving = new Set(d.alertIds);
  source.alertIds = source.alertIds.filter((id) => !moving.has(id));
  source.timeline.push({
    at,
    what: `merged into incident ${target.id}: ${d.reason}`,
    kind: 'merged_into',
    seq,
    from,
    to: target.id,
    reason: d.reason,
    ...byOf(by),
  });
  target.timeline.push({
    at,
    what: `incident ${source.id} merged in: ${d.reason}`,
    kind: 'merged_from',
    seq,
    from: source.id,
    reason: d.reason,
    ...byOf(by),
  });
  for (const id of d.alertIds) {
    const alert = s.alerts.get(id);
    if (alert?.incidentId === source.id) delete alert.incidentId;
  }
  attach(s, target, d.alertIds, at, seq, `merged from ${source.id}`, by);
}

/** A new incident, correlated or promoted, with its alerts (moved from any incident they were in). */
export function openIncident(s: AlertsState, d: IncidentOpened, at: string, seq: number): void {
  const by = { principal: d.principal, authentication: d.authentication };
  const incident: IncidentView = {
    id: d.incidentId,
    title: d.title,
    origin: d.origin,
    status: 'open',
    mergedFrom: [],
    alertIds: [],
    entities: [],
    firstSeen: '9999',
    lastSeen: '',
    timeline: [
      { at, what: `incident opened (${d.origin}): ${d.reason}`, kind: 'opened', seq, reason: d.reason, ...byOf(by) },
    ],
  };
  s.incidents.set(d.incidentId, incident);
  attach(s, incident, d.alertIds, at, seq, d.origin, by);
}

/** Alerts joining an existing incident, by correlation or promotion. */
export function addAlerts(s: AlertsState, d: IncidentAlertsAdded, at: string, seq: number): void {
  const incident = s.incidents.get(d.incidentId);
  if (incident)
    attach(s, incident, d.alertIds, at, seq, d.reason, { principal: d.principal, authentication: d.authentication });
}
