import type { DomainEvent } from '../decision.js';
import {
  DetectionRecord,
  type AlertRaised,
  type IncidentAlertsAdded,
  type IncidentOpened,
} from '../../events/detection-records.js';
import type { AlertsState, AlertView } from '../../projections/alerts.js';
import { epochMillisOf } from '../../kernel/time.js';
import { HISTORY_SHOWN } from '../../projections/alerts-query.js';
import { incidentIdOf } from './alert-facts.js';

/** How alerts are grouped into incidents. */
export interface IncidentSettings {
  /** Alerts whose affected systems overlap and whose times are this close join one incident. */
  readonly incidentWindowMs: number;
}

interface Candidate {
  readonly id: string;
  readonly incidentId?: string;
  readonly firstMs: number;
  readonly lastMs: number;
  readonly systems: readonly string[];
}

/**
 * One incident's candidates on a system, with the span of their times (to rule a group out without looking at its
 * members).
 */
interface Group {
  readonly members: Candidate[];
  minFirst: number;
  maxLast: number;
}

/** A system's candidates for this batch: grouped by the incident they are in, and those in none. */
interface SystemView {
  readonly groups: Map<string, Group>;
  readonly loose: Map<string, Candidate>;
}

const ms = (iso: string) => epochMillisOf(iso) ?? 0;

// A stored alert's times, parsed once for as long as they do not change (memo only: the result is the same without it).
const parsedTimes = new WeakMap<AlertView, { first: string; last: string; firstMs: number; lastMs: number }>();
function timesOf(a: AlertView): { firstMs: number; lastMs: number } {
  const t = parsedTimes.get(a);
  if (t && t.first === a.firstSeen && t.last === a.lastSeen) return t;
  const fresh = { first: a.firstSeen, last: a.lastSeen, firstMs: ms(a.firstSeen), lastMs: ms(a.lastSeen) };
  parsedTimes.set(a, fresh);
  return fresh;
}

/**
 * Groups newly raised alerts into incidents: an alert joins the incident of any alert (open or in
 * review) that shares an affected system and was seen within the window (the incident with the
 * smallest id when there are several); alerts that overlap but have no incident yet open one
 * together. Deterministic: candidates are taken in id order.
 *
 * A host that keeps raising alerts has thousands of them in one incident, so each system's
 * candidates are gathered once per batch, by incident: joining tests each incident's span before
 * its members, and opening looks only at the alerts in no incident.
 */
export function correlateIncidents(
  state: AlertsState,
  raised: readonly AlertRaised[],
  settings: IncidentSettings,
): { events: DomainEvent[]; summaries: IncidentSummary[] } {
  const window = settings.incidentWindowMs;
  const near = (me: Candidate, c: Candidate) =>
    c.id !== me.id && me.firstMs - c.lastMs <= window && c.firstMs - me.lastMs <= window;
  const opened = new Map<string, IncidentOpened & { alertIds: string[] }>();
  const added = new Map<string, IncidentAlertsAdded & { alertIds: string[] }>();
  // This batch's alerts (and stored alerts it put into an incident), by id and by affected system.
  const local = new Map<string, Candidate>();
  const localBySystem = new Map<string, string[]>();
  const views = new Map<string, SystemView>();

  const stored = (id: string): Candidate | undefined => {
    const a = state.alerts.get(id);
    if (!a || a.status === 'dismissed') return undefined;
    // A closed (or merged) incident stays closed: new activity opens a new incident instead of joining it.
    const held = a.incidentId !== undefined ? state.incidents.get(a.incidentId) : undefined;
    if (held !== undefined && (held.status === 'closed' || held.status === 'merged')) return undefined;
    const { firstMs, lastMs } = timesOf(a);
    return { id, ...(a.incidentId ? { incidentId: a.incidentId } : {}), firstMs, lastMs, systems: a.affectedSystems };
  };
  const place = (view: SystemView, c: Candidate): void => {
    if (c.incidentId === undefined) {
      view.loose.set(c.id, c);
      return;
    }
    view.loose.delete(c.id);
    const g = view.groups.get(c.incidentId);
    if (!g) {
      view.groups.set(c.incidentId, { members: [c], minFirst: c.firstMs, maxLast: c.lastMs });
      return;
    }
    g.members.push(c);
    if (c.firstMs < g.minFirst) g.minFirst = c.firstMs;
    if (c.lastMs > g.maxLast) g.maxLast = c.lastMs;
  };
  const viewOf = (sys: string): SystemView => {
    let view = views.get(sys);
    if (view) return view;
    view = { groups: new Map(), loose: new Map() };
    views.set(sys, view);
    for (const id of state.bySystem.get(sys) ?? []) {
      if (local.has(id)) continue;
      const c = stored(id);
      if (c) place(view, c);
    }
    for (const id of localBySystem.get(sys) ?? []) place(view, local.get(id)!);
    return view;
  };
  const setLocal = (c: Candidate): void => {
    const known = local.has(c.id);
    local.set(c.id, c);
    for (const sys of c.systems) {
      if (!known) {
        const ids = localBySystem.get(sys);
        if (ids) ids.push(c.id);
        else localBySystem.set(sys, [c.id]);
      }
      const view = views.get(sys);
      if (view) place(view, c);
    }
  };

  for (const alert of raised) {
    const me: Candidate = {
      id: alert.alertId,
      firstMs: ms(alert.firstSeen),
      lastMs: ms(alert.lastSeen),
      systems: alert.affectedSystems,
    };
    const mine = alert.affectedSystems.map(viewOf);
    const joined = joinedIncident(me, mine, near, window);
    if (joined !== undefined) {
      setLocal({ ...me, incidentId: joined });
      const o = opened.get(joined);
      if (o) o.alertIds.push(me.id);
      else {
        const a = added.get(joined);
        if (a) a.alertIds.push(me.id);
        else
          added.set(joined, {
            incidentId: joined,
            alertIds: [me.id],
            reason: `shares affected systems with the incident's alerts`,
          });
      }
      continue;
    }
    const peers = new Map<string, Candidate>();
    for (const view of mine) for (const c of view.loose.values()) if (near(me, c)) peers.set(c.id, c);
    if (peers.size === 0) {
      setLocal(me);
      continue;
    }
    const sorted = [...peers.keys()].sort().map((id) => peers.get(id)!);
    const alertIds = [...sorted.map((p) => p.id), me.id];
    const incidentId = incidentIdOf(alertIds[0]!);
    const shared = alert.affectedSystems.find((s) => sorted.some((p) => p.systems.includes(s)));
    opened.set(incidentId, {
      incidentId,
      title: `Related alerts on ${shared ?? 'shared systems'}`,
      origin: 'correlated',
      reason: `alerts share ${shared} within ${Math.round(window / 60000)} min`,
      alertIds,
    });
    for (const p of sorted) setLocal({ ...p, incidentId });
    setLocal({ ...me, incidentId });
  }
  const events: DomainEvent[] = [
    ...[...opened.values()].map((data) => ({ type: DetectionRecord.IncidentOpened, data })),
    ...[...added.values()].map((data) => ({ type: DetectionRecord.IncidentAlertsAdded, data })),
  ];
  const summaries = [
    ...[...opened.values()].map((o) => incidentSummary(o.incidentId, o.title, [], o.alertIds)),
    ...[...added.values()].map((a) =>
      incidentSummary(
        a.incidentId,
        state.incidents.get(a.incidentId)?.title ?? '',
        state.incidents.get(a.incidentId)?.alertIds ?? [],
        a.alertIds,
      ),
    ),
  ];
  return { events, summaries };
}

/** An incident as an ingestion result names it. */
export interface IncidentSummary {
  id: string;
  title: string;
  alertIds: readonly string[];
  alertCount: number;
}

/**
 * An incident a batch opened or added alerts to, as the ingestion result names it: its newest
 * HISTORY_SHOWN alert ids (those it had, then those that joined), and how many it has in all, so
 * the answer stays small however large the incident has grown.
 */
export function incidentSummary(
  id: string,
  title: string,
  had: readonly string[],
  joined: readonly string[],
): IncidentSummary {
  const kept = Math.min(had.length, Math.max(0, HISTORY_SHOWN - joined.length));
  return {
    id,
    title,
    alertIds: [...had.slice(had.length - kept), ...joined.slice(-HISTORY_SHOWN)],
    alertCount: had.length + joined.length,
  };
}

/** The smallest id of an incident with a candidate near `me` on one of its systems. */
function joinedIncident(
  me: Candidate,
  views: readonly SystemView[],
  near: (me: Candidate, c: Candidate) => boolean,
  window: number,
): string | undefined {
  const ids = new Set<string>();
  for (const view of views) for (const id of view.groups.keys()) ids.add(id);
  for (const id of [...ids].sort()) {
    for (const view of views) {
      const g = view.groups.get(id);
      if (!g || me.firstMs - g.maxLast > window || g.minFirst - me.lastMs > window) continue;
      if (g.members.some((c) => near(me, c))) return id;
    }
  }
  return undefined;
}
