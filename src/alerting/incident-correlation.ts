import type { DomainEvent } from '../commands/decision.js';
import { DetectionRecord, type AlertRaised, type IncidentAlertsAdded, type IncidentOpened } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import { epochMillisOf } from '../normalizers/time.js';
import { incidentIdOf } from './alert-facts.js';

/** How alerts are grouped into incidents. */
export interface IncidentSettings {
  /** Alerts whose affected systems overlap and whose times are this close join one incident. */
  readonly incidentWindowMs: number;
}

interface Candidate { id: string; incidentId?: string; firstMs: number; lastMs: number; systems: readonly string[] }

const ms = (iso: string) => epochMillisOf(iso) ?? 0;

/**
 * Groups newly raised alerts into incidents: an alert joins the incident of any alert (open or in
 * review) that shares an affected system and was seen within the window; alerts that overlap but
 * have no incident yet open one together. Deterministic: candidates are taken in id order.
 */
export function correlateIncidents(state: AlertsState, raised: readonly AlertRaised[], settings: IncidentSettings): { events: DomainEvent[]; summaries: Array<{ id: string; title: string; alertIds: string[] }> } {
  const local = new Map<string, Candidate>();
  const opened = new Map<string, IncidentOpened>();
  const added = new Map<string, IncidentAlertsAdded>();
  // This batch's alerts by affected system, so finding an alert's neighbours does not scan them all.
  const localBySystem = new Map<string, Set<string>>();
  const setLocal = (c: Candidate): void => {
    local.set(c.id, c);
    for (const sys of c.systems) {
      let ids = localBySystem.get(sys);
      if (!ids) localBySystem.set(sys, (ids = new Set()));
      ids.add(c.id);
    }
  };
  // A host's alerts are looked at again for every alert raised on it in this batch: read each once.
  const stored = new Map<string, Candidate | undefined>();
  const candidate = (id: string): Candidate | undefined => {
    const l = local.get(id);
    if (l) return l;
    if (stored.has(id)) return stored.get(id);
    const a = state.alerts.get(id);
    // A closed (or merged) incident stays closed: new activity opens a new incident instead of joining it.
    const held = a?.incidentId !== undefined ? state.incidents.get(a.incidentId) : undefined;
    const closed = held !== undefined && (held.status === 'closed' || held.status === 'merged');
    const c = !a || a.status === 'dismissed' || closed ? undefined : { id, ...(a.incidentId ? { incidentId: a.incidentId } : {}), firstMs: ms(a.firstSeen), lastMs: ms(a.lastSeen), systems: a.affectedSystems };
    stored.set(id, c);
    return c;
  };
  for (const alert of raised) {
    const me: Candidate = { id: alert.alertId, firstMs: ms(alert.firstSeen), lastMs: ms(alert.lastSeen), systems: alert.affectedSystems };
    const near = new Set<string>();
    for (const sys of alert.affectedSystems) {
      for (const id of state.bySystem.get(sys) ?? []) near.add(id);
      for (const id of localBySystem.get(sys) ?? []) near.add(id);
    }
    const peers = [...near].sort().map(candidate).filter((c): c is Candidate => c !== undefined && c.id !== me.id
      && me.firstMs - c.lastMs <= settings.incidentWindowMs && c.firstMs - me.lastMs <= settings.incidentWindowMs);
    const joined = peers.map((p) => p.incidentId).filter((i): i is string => i !== undefined).sort()[0];
    if (joined) {
      me.incidentId = joined;
      if (opened.has(joined)) opened.set(joined, { ...opened.get(joined)!, alertIds: [...opened.get(joined)!.alertIds, me.id] });
      else added.set(joined, { incidentId: joined, alertIds: [...(added.get(joined)?.alertIds ?? []), me.id], reason: `shares affected systems with the incident's alerts` });
    } else if (peers.length > 0) {
      const alertIds = [...peers.map((p) => p.id), me.id];
      const incidentId = incidentIdOf(alertIds[0]!);
      const shared = alert.affectedSystems.find((s) => peers.some((p) => p.systems.includes(s)));
      opened.set(incidentId, { incidentId, title: `Related alerts on ${shared ?? 'shared systems'}`, origin: 'correlated', reason: `alerts share ${shared} within ${Math.round(settings.incidentWindowMs / 60000)} min`, alertIds });
      for (const p of peers) setLocal({ ...p, incidentId });
      me.incidentId = incidentId;
    }
    setLocal(me);
  }
  const events: DomainEvent[] = [
    ...[...opened.values()].map((data) => ({ type: DetectionRecord.IncidentOpened, data })),
    ...[...added.values()].map((data) => ({ type: DetectionRecord.IncidentAlertsAdded, data })),
  ];
  const summaries = [
    ...[...opened.values()].map((o) => ({ id: o.incidentId, title: o.title, alertIds: [...o.alertIds] })),
    ...[...added.values()].map((a) => ({ id: a.incidentId, title: state.incidents.get(a.incidentId)?.title ?? '', alertIds: [...(state.incidents.get(a.incidentId)?.alertIds ?? []), ...a.alertIds] })),
  ];
  return { events, summaries };
}
