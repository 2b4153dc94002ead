import { exhaustive } from '../events/read.js';
import type {
  AlertAssigned,
  AlertDisposition,
  AlertNoteAdded,
  AlertRaised,
  AlertsBulkReviewed,
  AlertStatus,
  CorrelationReason,
  IntelReason,
  EvidenceRef,
  IncidentStatus,
} from '../events/detection-records.js';
import type { MatchDetail } from '../detection/types.js';
import { addAlerts, assignIncident, changeStatus, merge, openIncident } from './incident-fold.js';
import { instanceProjection } from './types.js';

export { ALERT_DISPOSITIONS, ALERT_STATUSES, INCIDENT_STATUSES } from '../events/detection-events.js';
export type { AlertDisposition, AlertStatus, IncidentStatus } from '../events/detection-records.js';

/** At most this many evidence references are kept on one alert (the count goes on). */
export const EVIDENCE_KEPT = 200;

/**
 * At most this many affected systems are kept on one alert: a scan from one address gathers every
 * destination it touched, and a /8 has 16 million. Those beyond are not kept, and the alert says
 * so (`affectedSystemsComplete: false`).
 */
export const SYSTEMS_KEPT_PER_ALERT = 10_000;

/**
 * At most this many links between an alert and an affected system are kept across all alerts
 * (about 200 bytes of heap each): many sources scanning at once. Past it, alerts keep no new systems.
 */
export const SYSTEM_LINKS_KEPT = 1_000_000;

/** One review-history entry; `seq` is its record's, so an auditor can ask for that record's inclusion proof. */
export interface ReviewEntry {
  at: string;
  seq: number;
  principal: string;
  authentication: string;
  from: string;
  to: string;
  reason: string;
  disposition?: AlertDisposition;
  bulk?: boolean;
}

/** One assignment-history entry: who set the assignee (`to`; none when cleared). */
export interface AssignmentEntry {
  at: string;
  seq: number;
  principal: string;
  authentication: string;
  from?: string;
  to?: string;
  reason?: string;
}

/** One note on an alert. */
export interface NoteEntry {
  at: string;
  seq: number;
  noteId: string;
  principal: string;
  authentication: string;
  text: string;
}

/** An alert as the detail route shows it. */
export interface AlertView {
  id: string;
  status: AlertStatus;
  ruleId: string;
  groupKey: string;
  title: string;
  author?: string;
  level: string;
  severity: number;
  confidence: number;
  matchReason: MatchDetail | CorrelationReason | IntelReason;
  evidence: EvidenceRef[];
  evidenceCount: number;
  affectedSystems: string[];
  /** False once a system of its evidence was not kept (SYSTEMS_KEPT_PER_ALERT, SYSTEM_LINKS_KEPT). */
  affectedSystemsComplete: boolean;
  firstSeen: string;
  lastSeen: string;
  tags: string[];
  attack: string[];
  /** Raised by a search of stored evidence for indicators added later (threat intelligence). */
  retro?: true;
  reviewHistory: ReviewEntry[];
  incidentId?: string;
  /** The principal the alert is assigned to, if any. */
  assignee?: string;
  /** The disposition of the latest review that gave one. */
  disposition?: AlertDisposition;
  assignmentHistory: AssignmentEntry[];
  notes: NoteEntry[];
  /** Set when its rule suppressed by field values: the fields, their values and the end of its window. */
  suppression?: AlertSuppression;
  /** With `suppression`: the matches it took (the one that raised it and those suppressed into it). */
  matchCount?: number;
  /** With `suppression`: the matches its suppression folded into it instead of raising new alerts. */
  suppressedCount?: number;
}

/** A suppressed alert's window as `AlertRaised` records it. */
export type AlertSuppression = NonNullable<AlertRaised['suppression']>;

/** One entry of an incident's timeline; `what` says it in words, the other fields say it as data. */
export interface IncidentTimelineEntry {
  at: string;
  what: string;
  /** `opened`, `alert_joined`, `alert_left`, `alert_reviewed`, `status`, `assignment`, `merged_into`, `merged_from`. */
  kind?: string;
  seq?: number;
  alertId?: string;
  principal?: string;
  authentication?: string;
  from?: string;
  to?: string;
  reason?: string;
}

/** An incident's lifecycle status: one an analyst sets, or `merged` (final). */
export type IncidentLifecycle = IncidentStatus | 'merged';

/** An incident with its alerts, lifecycle and timeline. */
export interface IncidentView {
  id: string;
  title: string;
  origin: 'correlated' | 'promoted';
  status: IncidentLifecycle;
  assignee?: string;
  /** The incident this one was merged into. */
  mergedInto?: string;
  /** Incidents merged into this one. */
  mergedFrom: string[];
  alertIds: string[];
  entities: string[];
  firstSeen: string;
  lastSeen: string;
  timeline: IncidentTimelineEntry[];
}

/** Alerts and incidents, with the indexes deciders need. */
export interface AlertsState {
  alerts: Map<string, AlertView>;
  /** `ruleId \0 groupKey` -> the alert that is not dismissed, so matches join it: the newest such alert of the key. */
  openByKey: Map<string, string>;
  /**
   * `ruleId \0 groupKey` -> every alert of that rule and group, in the order raised (not in the snapshot: rebuilt on
   * restore).
   */
  byKey: Map<string, string[]>;
  /** affected system -> alert ids, for incident correlation. */
  bySystem: Map<string, Set<string>>;
  /** How many alert-to-system links `bySystem` holds (at most SYSTEM_LINKS_KEPT). */
  systemLinks: number;
  incidents: Map<string, IncidentView>;
}

/** The key of an alert's rule and group. */
export const alertKey = (ruleId: string, groupKey: string) => `${ruleId}\u0000${groupKey}`;

function indexSystem(s: AlertsState, sys: string, alertId: string): void {
  let set = s.bySystem.get(sys);
  if (!set) s.bySystem.set(sys, (set = new Set()));
  set.add(alertId);
}

/** How many of `fresh` systems new to an alert that has `had` would be kept, with `links` links kept in all. */
export function systemsKept(had: number, fresh: number, links: number): number {
  return Math.max(0, Math.min(fresh, SYSTEMS_KEPT_PER_ALERT - had, SYSTEM_LINKS_KEPT - links));
}

function addSystems(s: AlertsState, alert: AlertView, systems: readonly string[]): void {
  for (const sys of systems) {
    // The index says whether the alert has the system already: a scan gathers thousands on one alert.
    if (s.bySystem.get(sys)?.has(alert.id) === true) continue;
    if (systemsKept(alert.affectedSystems.length, 1, s.systemLinks) === 0) {
      alert.affectedSystemsComplete = false;
      continue;
    }
    alert.affectedSystems.push(sys);
    indexSystem(s, sys, alert.id);
    s.systemLinks++;
  }
}

/**
 * Points `openByKey` at the newest alert of `key` that is not dismissed (or at none): the alert a
 * match joins. The same rule holds live and after a checkpoint is restored (restore below).
 */
function rekey(s: AlertsState, key: string): void {
  const ids = s.byKey.get(key) ?? [];
  for (let i = ids.length - 1; i >= 0; i--) {
    if (s.alerts.get(ids[i]!)?.status !== 'dismissed') {
      s.openByKey.set(key, ids[i]!);
      return;
    }
  }
  s.openByKey.delete(key);
}

function keyAlert(s: AlertsState, key: string, alertId: string): void {
  const ids = s.byKey.get(key);
  if (ids) ids.push(alertId);
  else s.byKey.set(key, [alertId]);
}

function raise(s: AlertsState, d: AlertRaised): void {
  const alert: AlertView = {
    id: d.alertId,
    status: 'open',
    ruleId: d.ruleId,
    groupKey: d.groupKey,
    title: d.title,
    ...(d.author !== undefined ? { author: d.author } : {}),
    level: d.level,
    severity: d.severity,
    confidence: d.confidence,
    matchReason: d.matchReason,
    evidence: [...d.evidence].slice(-EVIDENCE_KEPT),
    evidenceCount: d.evidence.length,
    affectedSystems: [],
    affectedSystemsComplete: true,
    firstSeen: d.firstSeen,
    lastSeen: d.lastSeen,
    tags: [...d.tags],
    attack: d.tags.filter((t) => t.startsWith('attack.')),
    ...(d.retro ? { retro: true as const } : {}),
    reviewHistory: [],
    assignmentHistory: [],
    notes: [],
    ...(d.suppression
      ? { suppression: d.suppression, matchCount: 1 + (d.suppressed ?? 0), suppressedCount: d.suppressed ?? 0 }
      : {}),
  };
  s.alerts.set(d.alertId, alert);
  keyAlert(s, alertKey(d.ruleId, d.groupKey), d.alertId);
  s.openByKey.set(alertKey(d.ruleId, d.groupKey), d.alertId);
  addSystems(s, alert, d.affectedSystems);
}

/** A review of one alert, from a single or a bulk review. */
interface Review {
  alertId: string;
  from: AlertStatus;
  to: AlertStatus;
  reason: string;
  principal: string;
  authentication: string;
  disposition?: AlertDisposition | undefined;
  bulk?: boolean;
}

function review(s: AlertsState, d: Review, at: string, seq: number): void {
  const alert = s.alerts.get(d.alertId);
  if (!alert) return;
  alert.status = d.to;
  if (d.disposition !== undefined) alert.disposition = d.disposition;
  alert.reviewHistory.push({
    at,
    seq,
    principal: d.principal,
    authentication: d.authentication,
    from: d.from,
    to: d.to,
    reason: d.reason,
    ...(d.disposition !== undefined ? { disposition: d.disposition } : {}),
    ...(d.bulk ? { bulk: true } : {}),
  });
  rekey(s, alertKey(alert.ruleId, alert.groupKey));
  if (alert.incidentId) {
    s.incidents.get(alert.incidentId)?.timeline.push({
      at,
      what: `alert ${d.from} -> ${d.to}: ${d.reason}`,
      kind: 'alert_reviewed',
      seq,
      alertId: alert.id,
      principal: d.principal,
      authentication: d.authentication,
      from: d.from,
      to: d.to,
      reason: d.reason,
    });
  }
}

function bulkReview(s: AlertsState, d: AlertsBulkReviewed, at: string, seq: number): void {
  for (const r of d.reviews) {
    review(
      s,
      {
        alertId: r.alertId,
        from: r.from,
        to: d.to,
        reason: d.reason,
        principal: d.principal,
        authentication: d.authentication,
        disposition: d.disposition,
        bulk: true,
      },
      at,
      seq,
    );
  }
}

function assign(s: AlertsState, d: AlertAssigned, at: string, seq: number): void {
  const alert = s.alerts.get(d.alertId);
  if (!alert) return;
  if (d.to !== undefined) alert.assignee = d.to;
  else delete alert.assignee;
  alert.assignmentHistory.push({
    at,
    seq,
    principal: d.principal,
    authentication: d.authentication,
    ...(d.from !== undefined ? { from: d.from } : {}),
    ...(d.to !== undefined ? { to: d.to } : {}),
    ...(d.reason !== undefined ? { reason: d.reason } : {}),
  });
}

function note(s: AlertsState, d: AlertNoteAdded, at: string, seq: number): void {
  s.alerts
    .get(d.alertId)
    ?.notes.push({ at, seq, noteId: d.noteId, principal: d.principal, authentication: d.authentication, text: d.text });
}

/** Alerts with their review history, and incidents with their alerts, entities and timeline. */
export const alertsProjection = instanceProjection({
  name: 'alerts',
  // 2: review-history entries carry their record's seq. 3: assignment, notes, dispositions.
  // 4: the incident lifecycle; an alert promoted elsewhere leaves its incident.
  // 5: a match joins the newest alert of its rule and group that is not dismissed, live as after a restore.
  // 6: affected systems kept up to SYSTEMS_KEPT_PER_ALERT and SYSTEM_LINKS_KEPT.
  // 7: a suppressed alert keeps its suppression, matchCount and suppressedCount.
  version: 7,
  folds: [
    'AlertRaised',
    'AlertEvidenceAdded',
    'AlertReviewed',
    'AlertsBulkReviewed',
    'AlertAssigned',
    'AlertNoteAdded',
    'IncidentOpened',
    'IncidentAlertsAdded',
    'IncidentStatusChanged',
    'IncidentAssigned',
    'IncidentMerged',
  ],
  initial: (): AlertsState => ({
    alerts: new Map(),
    openByKey: new Map(),
    byKey: new Map(),
    bySystem: new Map(),
    systemLinks: 0,
    incidents: new Map(),
  }),
  evolve(s, record) {
    switch (record.type) {
      case 'AlertRaised':
        raise(s, record.data);
        return s;
      case 'AlertEvidenceAdded': {
        const d = record.data;
        const alert = s.alerts.get(d.alertId);
        if (!alert) return s;
        alert.evidence = [...alert.evidence, ...d.evidence].slice(-EVIDENCE_KEPT);
        alert.evidenceCount += d.evidence.length;
        alert.confidence = d.confidence;
        if (d.lastSeen > alert.lastSeen) alert.lastSeen = d.lastSeen;
        addSystems(s, alert, d.affectedSystems);
        if (alert.suppression && d.suppressed !== undefined) {
          alert.matchCount = (alert.matchCount ?? 1) + d.suppressed;
          alert.suppressedCount = (alert.suppressedCount ?? 0) + d.suppressed;
        }
        return s;
      }
      case 'AlertReviewed':
        review(s, record.data, record.at, record.seq);
        return s;
      case 'AlertsBulkReviewed':
        bulkReview(s, record.data, record.at, record.seq);
        return s;
      case 'AlertAssigned':
        assign(s, record.data, record.at, record.seq);
        return s;
      case 'AlertNoteAdded':
        note(s, record.data, record.at, record.seq);
        return s;
      case 'IncidentOpened':
        openIncident(s, record.data, record.at, record.seq);
        return s;
      case 'IncidentAlertsAdded':
        addAlerts(s, record.data, record.at, record.seq);
        return s;
      case 'IncidentStatusChanged':
        changeStatus(s, record.data, record.at, record.seq);
        return s;
      case 'IncidentAssigned':
        assignIncident(s, record.data, record.at, record.seq);
        return s;
      case 'IncidentMerged':
        merge(s, record.data, record.at, record.seq);
        return s;
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({ alerts: [...s.alerts.values()], incidents: [...s.incidents.values()] }),
  restore(data) {
    const d = data as { alerts: AlertView[]; incidents: IncidentView[] };
    const s: AlertsState = {
      alerts: new Map(),
      openByKey: new Map(),
      byKey: new Map(),
      bySystem: new Map(),
      systemLinks: 0,
      incidents: new Map(d.incidents.map((i) => [i.id, i])),
    };
    // Alerts come in the order raised, so the last one of a key that is not dismissed holds it (as rekey decides live).
    for (const a of d.alerts) {
      s.alerts.set(a.id, a);
      keyAlert(s, alertKey(a.ruleId, a.groupKey), a.id);
      if (a.status !== 'dismissed') s.openByKey.set(alertKey(a.ruleId, a.groupKey), a.id);
      for (const sys of a.affectedSystems) indexSystem(s, sys, a.id);
      s.systemLinks += a.affectedSystems.length;
    }
    return s;
  },
});
