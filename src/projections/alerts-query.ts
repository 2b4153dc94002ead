import type { AlertStatus, AlertsState, AlertView, IncidentView } from './alerts.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/** Filters of `GET /api/v1/alerts`. */
export interface AlertFilter {
  readonly status?: AlertStatus;
  readonly minSeverity?: number;
  readonly ruleId?: string;
  /** Any of these rules (what a rule name or title resolves to: `resolveRule`). */
  readonly ruleIds?: readonly string[];
  readonly entity?: string;
  /** The principal the alerts are assigned to. */
  readonly assignee?: string;
  /** Only alerts with no assignee (true) or only assigned ones (false). */
  readonly unassigned?: boolean;
  readonly since?: string;
  /** The incident the alerts are in. */
  readonly incident?: string;
}

/**
 * An alert in a list: the detail without evidence and history, its first SYSTEMS_LISTED affected systems, and how many
 * it has.
 */
export type AlertListItem = Omit<
  AlertView,
  'evidence' | 'reviewHistory' | 'matchReason' | 'assignmentHistory' | 'notes'
> & { affectedSystemsCount: number };

/**
 * Affected systems an alert names in a list, an incident's lines and an ingestion result (the first
 * ones: those of the evidence that raised it); a scan from one address gathers thousands.
 */
export const SYSTEMS_LISTED = 20;

/**
 * An alert's first `n` affected systems, how many it keeps (`affectedSystemsCount`), and whether those are all its
 * evidence named.
 */
export function systemsOf(
  a: Pick<AlertView, 'affectedSystems' | 'affectedSystemsComplete'>,
  n: number,
): { affectedSystems: string[]; affectedSystemsCount: number; affectedSystemsComplete: boolean } {
  return {
    affectedSystems: a.affectedSystems.slice(0, n),
    affectedSystemsCount: a.affectedSystems.length,
    affectedSystemsComplete: a.affectedSystemsComplete,
  };
}

const newestFirst = (a: { lastSeen: string; id: string }, b: { lastSeen: string; id: string }) =>
  a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * The alerts a filter can only be among: an incident's (exactly the alerts whose `incidentId` names it), an entity's,
 * or all.
 */
function candidates(s: AlertsState, f: AlertFilter): Iterable<AlertView> {
  const ids =
    f.incident !== undefined
      ? (s.incidents.get(f.incident)?.alertIds ?? [])
      : f.entity !== undefined
        ? (s.bySystem.get(f.entity) ?? [])
        : undefined;
  return ids === undefined
    ? s.alerts.values()
    : [...ids].map((id) => s.alerts.get(id)).filter((a): a is AlertView => a !== undefined);
}

/** Every alert that matches a filter, most recently seen first (what "all that match" means for a bulk action). */
export function matchingAlerts(s: AlertsState, f: AlertFilter): AlertView[] {
  return [...candidates(s, f)]
    .filter(
      (a) =>
        (f.status === undefined || a.status === f.status) &&
        (f.minSeverity === undefined || a.severity >= f.minSeverity) &&
        (f.ruleId === undefined || a.ruleId === f.ruleId) &&
        (f.ruleIds === undefined || f.ruleIds.includes(a.ruleId)) &&
        (f.since === undefined || a.lastSeen >= f.since) &&
        (f.assignee === undefined || a.assignee === f.assignee) &&
        (f.unassigned === undefined || (a.assignee === undefined) === f.unassigned) &&
        (f.entity === undefined || s.bySystem.get(f.entity)?.has(a.id) === true),
    )
    .sort(newestFirst);
}

/** A rule as the rule filter knows it by: its id, its title and its Sigma `name`. */
export interface RuleNames {
  readonly id: string;
  readonly title: string;
  readonly name?: string | undefined;
}

/**
 * The ids of Vigil's own checks' rules (src/commands/system-alerts.ts, exceptions.ts, alerting/intel-alerts.ts; a
 * test holds them equal): not installed rules, but a `rule` filter knows them before their first alert.
 */
export const VIGIL_RULE_IDS: ReadonlySet<string> = new Set([
  'vigil.source-silent',
  'vigil.disk-low',
  'vigil.rule-quarantined',
  'vigil.witness-refused',
  'vigil.exception-expiring',
  'vigil.threat-intel-match',
]);

/**
 * The rules a `rule` filter names: the id of an installed rule or of any alert's rule (Vigil's own `vigil.*`
 * rules, a rule since removed) is that rule alone; otherwise every installed rule whose title or name, and every
 * alert's rule whose title, equals the text (case and surrounding spaces aside; titles need not be unique).
 * Undefined when nothing is known by that id, name or title, so a caller can say so instead of listing nothing.
 */
export function resolveRule(
  s: Pick<AlertsState, 'alerts'>,
  rules: Iterable<RuleNames>,
  text: string,
): string[] | undefined {
  // Vigil's own checks are known before they raise anything: a client may wait for their first alert.
  if (VIGIL_RULE_IDS.has(text)) return [text];
  const wanted = text.trim().toLowerCase();
  const ids = new Set<string>();
  for (const r of rules) {
    if (r.id === text) return [text];
    if (r.title.toLowerCase() === wanted || r.name?.toLowerCase() === wanted) ids.add(r.id);
  }
  for (const a of s.alerts.values()) {
    if (a.ruleId === text) return [text];
    if (!ids.has(a.ruleId) && a.title.toLowerCase() === wanted) ids.add(a.ruleId);
  }
  return ids.size > 0 ? [...ids].sort() : undefined;
}

/** Orders of an alert list, each descending: most recently seen, most recently first seen, most severe. */
export const ALERT_SORTS = ['lastSeen', 'firstSeen', 'severity'] as const;
/** One order of an alert list. */
export type AlertSort = (typeof ALERT_SORTS)[number];

type Keyed = Pick<AlertView, 'id' | 'lastSeen' | 'firstSeen' | 'severity'>;
const sortKey = (a: Keyed, sort: AlertSort): string | number =>
  sort === 'severity' ? a.severity : sort === 'firstSeen' ? a.firstSeen : a.lastSeen;
/** Descending by the sort's key, then most recently seen, then by id: a total order, so a cursor resumes exactly. */
function ordered(sort: AlertSort) {
  return (a: Keyed, b: Keyed): number => {
    const ka = sortKey(a, sort);
    const kb = sortKey(b, sort);
    return ka < kb ? 1 : ka > kb ? -1 : newestFirst(a, b);
  };
}

/** The position a cursor names: the sort's key, last seen and id of the last alert of the previous page. */
function positionOf(cursor: string, sort: AlertSort): Keyed | undefined {
  const c = decodeCursor<unknown[]>(cursor);
  if (!Array.isArray(c)) return undefined;
  // The cursor of the default order is [lastSeen, id] (as before sorting existed); the others name their sort.
  if (sort === 'lastSeen' && c.length === 2 && typeof c[0] === 'string' && typeof c[1] === 'string')
    return { lastSeen: c[0], firstSeen: '', severity: 0, id: c[1] };
  if (c.length !== 4 || c[0] !== sort || typeof c[2] !== 'string' || typeof c[3] !== 'string') return undefined;
  if (sort === 'severity' ? typeof c[1] !== 'number' : typeof c[1] !== 'string') return undefined;
  return {
    lastSeen: c[2],
    id: c[3],
    severity: sort === 'severity' ? (c[1] as number) : 0,
    firstSeen: sort === 'firstSeen' ? (c[1] as string) : '',
  };
}

/**
 * Lists alerts matching a filter in one order (most recently seen first by default), a page at a
 * time with a cursor. Undefined when the cursor is not one of ours for this order.
 */
export function listAlerts(
  s: AlertsState,
  f: AlertFilter,
  limit: number,
  cursor?: string,
  sort: AlertSort = 'lastSeen',
): { alerts: AlertListItem[]; nextCursor: string | null } | undefined {
  const after = cursor !== undefined ? positionOf(cursor, sort) : undefined;
  if (cursor !== undefined && after === undefined) return undefined;
  const cmp = ordered(sort);
  const pool = sort === 'lastSeen' ? matchingAlerts(s, f) : matchingAlerts(s, f).sort(cmp);
  const start = after ? pool.findIndex((a) => cmp(a, after) > 0) : 0;
  const page = start < 0 ? [] : pool.slice(start, start + limit);
  const more = start >= 0 && start + limit < pool.length;
  const last = page.at(-1);
  return {
    alerts: page.map(
      ({ evidence: _e, reviewHistory: _r, matchReason: _m, assignmentHistory: _a, notes: _n, ...rest }) => ({
        ...rest,
        ...systemsOf(rest, SYSTEMS_LISTED),
      }),
    ),
    nextCursor:
      more && last
        ? encodeCursor(
            sort === 'lastSeen' ? [last.lastSeen, last.id] : [sort, sortKey(last, sort), last.lastSeen, last.id],
          )
        : null,
  };
}

/** One page of a list: its entries, and the cursor of the next page (null: this is the last). */
export interface ListPage<T> {
  readonly items: T[];
  readonly nextCursor: string | null;
}

/**
 * Entries of each list an alert's or incident's detail carries: the newest (alerts: the most recently seen); the rest
 * is paged.
 */
export const HISTORY_SHOWN = 200;

/** How many alerts, entities, merged incidents and timeline entries an incident has in all. */
export interface IncidentTotals {
  alerts: number;
  entities: number;
  mergedFrom: number;
  timeline: number;
}

/**
 * An incident in a list: the incident without its timeline, bounded as its detail is, with its severity and how many of
 * its alerts are not dismissed.
 */
export type IncidentListItem = Omit<IncidentView, 'timeline'> & {
  severity: number;
  alertsOpen: number;
  totals: IncidentTotals;
};

/** Incidents, most recently active first (at most `limit`), optionally of one lifecycle status. */
export function listIncidents(s: AlertsState, limit: number, status?: string): IncidentListItem[] {
  return [...s.incidents.values()]
    .filter((i) => status === undefined || i.status === status)
    .sort(newestFirst)
    .slice(0, limit)
    .map((i) => {
      const { timeline: _t, newest: _n, ...bounded } = boundedIncident(s, i);
      return bounded;
    });
}

/** An incident's severity (its highest alert's) and the number of its alerts that are not dismissed. */
export function incidentRollup(
  s: AlertsState,
  i: Pick<IncidentView, 'alertIds'>,
): { severity: number; alertsOpen: number } {
  return rollupOf(i.alertIds.map((id) => s.alerts.get(id)).filter((a): a is AlertView => a !== undefined));
}

function rollupOf(alerts: readonly AlertView[]): { severity: number; alertsOpen: number } {
  let severity = 0;
  let alertsOpen = 0;
  for (const a of alerts) {
    if (a.severity > severity) severity = a.severity;
    if (a.status !== 'dismissed') alertsOpen++;
  }
  return { severity, alertsOpen };
}

/**
 * An incident with its lists bounded: the ids of its HISTORY_SHOWN most recently seen alerts, its
 * first HISTORY_SHOWN entities, its newest HISTORY_SHOWN merged incidents and timeline entries,
 * how many there are of each (`totals`), and its rollup.
 */
function boundedIncident(s: AlertsState, i: IncidentView) {
  const alerts = matchingAlerts(s, { incident: i.id });
  const newest = alerts.slice(0, HISTORY_SHOWN);
  return {
    ...i,
    alertIds: newest.map((a) => a.id),
    entities: i.entities.slice(0, HISTORY_SHOWN),
    mergedFrom: i.mergedFrom.slice(-HISTORY_SHOWN),
    timeline: i.timeline.slice(-HISTORY_SHOWN),
    ...rollupOf(alerts),
    totals: {
      alerts: i.alertIds.length,
      entities: i.entities.length,
      mergedFrom: i.mergedFrom.length,
      timeline: i.timeline.length,
    },
    newest,
  };
}

/** An alert as an incident lists it (its first SYSTEMS_LISTED affected systems, and how many it has). */
export type IncidentAlertLine = Pick<
  AlertView,
  | 'id'
  | 'status'
  | 'title'
  | 'ruleId'
  | 'severity'
  | 'firstSeen'
  | 'lastSeen'
  | 'affectedSystems'
  | 'affectedSystemsComplete'
  | 'assignee'
> & { affectedSystemsCount: number };
const lineOf = (a: AlertView): IncidentAlertLine => ({
  id: a.id,
  status: a.status,
  title: a.title,
  ruleId: a.ruleId,
  severity: a.severity,
  firstSeen: a.firstSeen,
  lastSeen: a.lastSeen,
  ...systemsOf(a, SYSTEMS_LISTED),
  ...(a.assignee !== undefined ? { assignee: a.assignee } : {}),
});

/**
 * An incident as its detail shows it: the incident bounded as in a list, its rollup, and a line for
 * each of its HISTORY_SHOWN most recently seen alerts (the first page of `incidentAlertsPage`).
 * Undefined when unknown.
 */
export function incidentDetail(s: AlertsState, id: string) {
  const incident = s.incidents.get(id);
  if (!incident) return undefined;
  const { newest, ...bounded } = boundedIncident(s, incident);
  return { ...bounded, alerts: newest.map(lineOf) };
}

/**
 * A page of an incident's alerts as lines, most recently seen first, `limit` after `cursor`; undefined when the cursor
 * is not ours.
 */
export function incidentAlertsPage(
  s: AlertsState,
  incidentId: string,
  limit: number,
  cursor?: string,
): ListPage<IncidentAlertLine> | undefined {
  const page = listAlerts(s, { incident: incidentId }, limit, cursor);
  return page && { items: page.alerts.map((a) => lineOf(s.alerts.get(a.id)!)), nextCursor: page.nextCursor };
}

/**
 * A page of a list of distinct names that only grows (an incident's entities, an alert's affected
 * systems) in its order, `limit` after `cursor` (which names the last one of the previous page).
 * Undefined when the cursor is not ours or names one the list does not have.
 */
export function namesPage(names: readonly string[], limit: number, cursor?: string): ListPage<string> | undefined {
  let start = 0;
  if (cursor !== undefined) {
    const name = decodeCursor<unknown>(cursor);
    const at = typeof name === 'string' ? names.indexOf(name) : -1;
    if (at < 0) return undefined;
    start = at + 1;
  }
  const items = names.slice(start, start + limit);
  return { items, nextCursor: start + limit < names.length ? encodeCursor(items.at(-1)) : null };
}

/** One entry of an alert's timeline: a review, an assignment or a note, with who and how they authenticated. */
export type AlertTimelineEntry =
  | {
      kind: 'review';
      at: string;
      seq: number;
      principal: string;
      authentication: string;
      from: string;
      to: string;
      reason: string;
      disposition?: string;
      bulk?: boolean;
    }
  | {
      kind: 'assignment';
      at: string;
      seq: number;
      principal: string;
      authentication: string;
      from?: string;
      to?: string;
      reason?: string;
    }
  | { kind: 'note'; at: string; seq: number; principal: string; authentication: string; noteId: string; text: string };

/** An alert's reviews, assignments and notes as one timeline, in log order. */
export function alertTimeline(
  a: Pick<AlertView, 'reviewHistory' | 'assignmentHistory' | 'notes'>,
): AlertTimelineEntry[] {
  const entries: AlertTimelineEntry[] = [
    ...a.reviewHistory.map((r) => ({ kind: 'review' as const, ...r })),
    ...a.assignmentHistory.map((r) => ({ kind: 'assignment' as const, ...r })),
    ...a.notes.map((n) => ({ kind: 'note' as const, ...n })),
  ];
  // A bulk review and a note can share a record only if one command wrote both; kind order breaks the tie.
  return entries.sort((x, y) => x.seq - y.seq);
}

/**
 * An alert as its detail shows it: its reviews, assignments and notes the newest HISTORY_SHOWN of
 * each, the timeline the newest HISTORY_SHOWN entries of all three, and how many there are in all
 * (`historyTotals`), so the answer stays bounded however often an alert was reviewed; its first
 * HISTORY_SHOWN affected systems, and how many it has.
 */
export function alertDetail<
  A extends Pick<
    AlertView,
    'reviewHistory' | 'assignmentHistory' | 'notes' | 'affectedSystems' | 'affectedSystemsComplete'
  >,
>(a: A) {
  const timeline = alertTimeline(a);
  return {
    ...a,
    ...systemsOf(a, HISTORY_SHOWN),
    reviewHistory: a.reviewHistory.slice(-HISTORY_SHOWN),
    assignmentHistory: a.assignmentHistory.slice(-HISTORY_SHOWN),
    notes: a.notes.slice(-HISTORY_SHOWN),
    timeline: timeline.slice(-HISTORY_SHOWN),
    historyTotals: {
      reviews: a.reviewHistory.length,
      assignments: a.assignmentHistory.length,
      notes: a.notes.length,
      timeline: timeline.length,
    },
  };
}

/**
 * A page of a timeline in log order (oldest first), `limit` entries after `cursor`. The cursor names
 * the last entry's record and how many entries of that record came before it, so it stays exact when
 * retention has since dropped older entries. Undefined when the cursor is not ours.
 */
export function timelinePage<T extends { seq?: number | undefined }>(
  all: readonly T[],
  limit: number,
  cursor?: string,
): ListPage<T> | undefined {
  let after: [number, number] | undefined;
  if (cursor !== undefined) {
    const c = decodeCursor<unknown>(cursor);
    if (!Array.isArray(c) || c.length !== 2 || !c.every((x) => Number.isSafeInteger(x) && (x as number) >= 0))
      return undefined;
    after = c as [number, number];
  }
  const seqAt = (i: number) => all[i]!.seq ?? 0;
  let start = 0;
  if (after) {
    const [seq, within] = after;
    while (start < all.length && seqAt(start) < seq) start++;
    for (let k = 0; k < within && start < all.length && seqAt(start) === seq; k++) start++;
  }
  const items = all.slice(start, start + limit);
  if (items.length === 0 || start + limit >= all.length) return { items, nextCursor: null };
  const end = start + items.length - 1;
  let within = 0;
  for (let i = end; i >= 0 && seqAt(i) === seqAt(end); i--) within++;
  return { items, nextCursor: encodeCursor([seqAt(end), within]) };
}
