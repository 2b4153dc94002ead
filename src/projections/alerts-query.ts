import type { AlertStatus, AlertsState, AlertView, IncidentView } from './alerts.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/** Filters of `GET /api/v1/alerts`. */
export interface AlertFilter {
  readonly status?: AlertStatus;
  readonly minSeverity?: number;
  readonly ruleId?: string;
  readonly entity?: string;
  /** The principal the alerts are assigned to. */
  readonly assignee?: string;
  readonly since?: string;
}

/** An alert in a list: the detail without evidence and history. */
export type AlertListItem = Omit<AlertView, 'evidence' | 'reviewHistory' | 'matchReason' | 'assignmentHistory' | 'notes'>;

const newestFirst = (a: { lastSeen: string; id: string }, b: { lastSeen: string; id: string }) =>
  a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** Every alert that matches a filter, most recently seen first (what "all that match" means for a bulk action). */
export function matchingAlerts(s: AlertsState, f: AlertFilter): AlertView[] {
  return (f.entity !== undefined ? [...(s.bySystem.get(f.entity) ?? [])].map((id) => s.alerts.get(id)!) : [...s.alerts.values()])
    .filter((a) => (f.status === undefined || a.status === f.status) && (f.minSeverity === undefined || a.severity >= f.minSeverity)
      && (f.ruleId === undefined || a.ruleId === f.ruleId) && (f.since === undefined || a.lastSeen >= f.since)
      && (f.assignee === undefined || a.assignee === f.assignee))
    .sort(newestFirst);
}

/** Lists alerts, most recently seen first, with a cursor. Undefined when the cursor is not one of ours. */
export function listAlerts(s: AlertsState, f: AlertFilter, limit: number, cursor?: string): { alerts: AlertListItem[]; nextCursor: string | null } | undefined {
  const after = cursor !== undefined ? decodeCursor<[string, string]>(cursor) : undefined;
  if (cursor !== undefined && !(Array.isArray(after) && typeof after[0] === 'string' && typeof after[1] === 'string')) return undefined;
  const pool = matchingAlerts(s, f);
  const start = after ? pool.findIndex((a) => newestFirst(a, { lastSeen: after[0], id: after[1] }) > 0) : 0;
  const page = start < 0 ? [] : pool.slice(start, start + limit);
  const more = start >= 0 && start + limit < pool.length;
  return {
    alerts: page.map(({ evidence: _e, reviewHistory: _r, matchReason: _m, assignmentHistory: _a, notes: _n, ...rest }) => rest),
    nextCursor: more ? encodeCursor([page.at(-1)!.lastSeen, page.at(-1)!.id]) : null,
  };
}

/** An incident in a list: the incident without its timeline, with its severity and how many of its alerts are not dismissed. */
export type IncidentListItem = Omit<IncidentView, 'timeline'> & { severity: number; alertsOpen: number };

/** Incidents, most recently active first (at most `limit`), optionally of one lifecycle status. */
export function listIncidents(s: AlertsState, limit: number, status?: string): IncidentListItem[] {
  return [...s.incidents.values()].filter((i) => status === undefined || i.status === status).sort(newestFirst).slice(0, limit)
    .map(({ timeline: _t, ...i }) => ({ ...i, ...incidentRollup(s, i) }));
}

/** An incident's severity (its highest alert's) and the number of its alerts that are not dismissed. */
export function incidentRollup(s: AlertsState, i: Pick<IncidentView, 'alertIds'>): { severity: number; alertsOpen: number } {
  const alerts = i.alertIds.map((id) => s.alerts.get(id)).filter((a): a is AlertView => a !== undefined);
  return { severity: Math.max(0, ...alerts.map((a) => a.severity)), alertsOpen: alerts.filter((a) => a.status !== 'dismissed').length };
}

/** An incident as its detail shows it: the incident, its rollup, and a line for each of its alerts. Undefined when unknown. */
export function incidentDetail(s: AlertsState, id: string) {
  const incident = s.incidents.get(id);
  if (!incident) return undefined;
  const alerts = incident.alertIds.map((a) => s.alerts.get(a)).filter((a): a is AlertView => a !== undefined)
    .map((a) => ({ id: a.id, status: a.status, title: a.title, ruleId: a.ruleId, severity: a.severity, firstSeen: a.firstSeen, lastSeen: a.lastSeen, affectedSystems: a.affectedSystems, ...(a.assignee !== undefined ? { assignee: a.assignee } : {}) }));
  return { ...incident, ...incidentRollup(s, incident), alerts };
}

/** One entry of an alert's timeline: a review, an assignment or a note, with who and how they authenticated. */
export type AlertTimelineEntry =
  | { kind: 'review'; at: string; seq: number; principal: string; authentication: string; from: string; to: string; reason: string; disposition?: string; bulk?: boolean }
  | { kind: 'assignment'; at: string; seq: number; principal: string; authentication: string; from?: string; to?: string; reason?: string }
  | { kind: 'note'; at: string; seq: number; principal: string; authentication: string; noteId: string; text: string };

/** An alert's reviews, assignments and notes as one timeline, in log order. */
export function alertTimeline(a: Pick<AlertView, 'reviewHistory' | 'assignmentHistory' | 'notes'>): AlertTimelineEntry[] {
  const entries: AlertTimelineEntry[] = [
    ...a.reviewHistory.map((r) => ({ kind: 'review' as const, ...r })),
    ...a.assignmentHistory.map((r) => ({ kind: 'assignment' as const, ...r })),
    ...a.notes.map((n) => ({ kind: 'note' as const, ...n })),
  ];
  // A bulk review and a note can share a record only if one command wrote both; kind order breaks the tie.
  return entries.sort((x, y) => x.seq - y.seq);
}
