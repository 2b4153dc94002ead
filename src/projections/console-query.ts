import * as v from 'valibot';
import type { DetectionPlan } from './plan.js';
import { epochMillisOf } from '../kernel/time.js';
import type { Activity, ActivityState } from './activity.js';
import type { AlertsState, AlertView } from './alerts.js';
import { incidentRollup } from './alerts-query.js';

/** What the instance knows of its own reporting to the setup authority (shown by the console). */
export interface ReporterStatus {
  readonly deploymentId: string;
  readonly authorityUrl: string;
  readonly intervalSeconds: number;
  readonly lastAttemptAt: string | null;
  readonly lastDeliveredAt: string | null;
  /** The deployment status the authority answered with the last accepted snapshot. */
  readonly authorityStatus: string | null;
  /** When the current run of failed deliveries began (null while delivering). */
  readonly failingSince: string | null;
  /** Why the last delivery failed: an HTTP status or a network error message (never a secret). */
  readonly lastError: string | null;
}

/** At most this many alerts are listed (the counts cover all). */
export const CONSOLE_ALERTS = 500;
/** At most this many incidents are listed. */
export const CONSOLE_INCIDENTS = 200;
/** At most this many systems are listed. */
export const CONSOLE_SYSTEMS = 500;
/** A system is live when its evidence arrived within this window (the deployment reporter's window too). */
export const LIVE_MS = 15 * 60_000;
/**
 * The setup authority's default heartbeat timeout: past it without a delivered snapshot, it marks the deployment
 * central_missing.
 */
export const AUTHORITY_HEARTBEAT_TIMEOUT_S = 900;

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));

/** The detection plan's summary (projections/plan.ts), as the plan route and the console projection answer it. */
export const PlanSummarySchema = v.strictObject({
  rules: Count,
  ready: Count,
  degraded: Count,
  blocked: Count,
  quarantined: Count,
  disabled: Count,
});
const Names = v.array(v.string());
const Time = v.string();

/**
 * An alert as the console shows it: what an analyst decides from, never its evidence, match values or event attributes.
 */
export const ConsoleAlertSchema = v.strictObject({
  id: v.string(),
  title: v.string(),
  ruleId: v.string(),
  level: v.string(),
  severity: v.number(),
  status: v.string(),
  assignee: v.nullable(v.string()),
  disposition: v.nullable(v.string()),
  affectedSystems: Names,
  evidenceCount: Count,
  firstSeen: Time,
  lastSeen: Time,
  incidentId: v.nullable(v.string()),
});

/** An incident as the console shows it. */
export const ConsoleIncidentSchema = v.strictObject({
  id: v.string(),
  title: v.string(),
  origin: v.string(),
  status: v.string(),
  severity: v.number(),
  assignee: v.nullable(v.string()),
  alertCount: Count,
  affectedSystems: Names,
  firstSeen: Time,
  lastSeen: Time,
});

/** One system reporting evidence (`adapter:instance`) and its last report. */
export const ConsoleSystemSchema = v.strictObject({
  name: v.string(),
  adapter: v.string(),
  live: v.boolean(),
  lastReportAt: Time,
  lastEventTime: Time,
  events: Count,
  eventsLastHour: Count,
  events24h: Count,
});

/**
 * One source (an ingest adapter) with its rates: `perHour` is the last 24 hours, oldest first, the current hour last.
 */
export const ConsoleSourceSchema = v.strictObject({
  adapter: v.string(),
  lastReportAt: Time,
  events: Count,
  eventsLastHour: Count,
  events24h: Count,
  perHour: v.array(Count),
});

/** The deployment as this instance knows it from its own reporting to the setup authority. */
export const ConsoleDeploymentSchema = v.strictObject({
  state: v.picklist(['not_configured', 'reporting', 'not_delivered', 'not_yet_reported']),
  deploymentId: v.nullable(v.string()),
  authorityUrl: v.nullable(v.string()),
  centralVmId: v.nullable(v.string()),
  lastAttemptAt: v.nullable(Time),
  lastDeliveredAt: v.nullable(Time),
  authorityStatus: v.nullable(v.string()),
  failingSince: v.nullable(Time),
  lastError: v.nullable(v.string()),
  centralMissing: v.strictObject({ likely: v.boolean(), recoveryAction: v.nullable(v.string()) }),
});

/** The raw-log-free console projection (spec 5.2), the answer of `GET /api/v1/console`. */
export const ConsoleViewSchema = v.strictObject({
  generatedAt: Time,
  alerts: v.strictObject({
    total: Count,
    byStatus: v.record(v.string(), Count),
    openBySeverity: v.record(v.string(), Count),
    unassigned: Count,
    /**
     * Alerts whose first evidence falls in each of the last 24 hours, by level: 24 counts, oldest first, the current
     * hour last.
     */
    perHourByLevel: v.record(v.string(), v.array(Count)),
    items: v.array(ConsoleAlertSchema),
    truncated: v.boolean(),
  }),
  incidents: v.strictObject({
    total: Count,
    byStatus: v.record(v.string(), Count),
    items: v.array(ConsoleIncidentSchema),
    truncated: v.boolean(),
  }),
  systems: v.strictObject({
    total: Count,
    live: Count,
    items: v.array(ConsoleSystemSchema),
    truncated: v.boolean(),
    untrackedEvents: Count,
  }),
  sources: v.array(ConsoleSourceSchema),
  detectionPlan: v.strictObject({
    generatedAt: Time,
    freshnessHours: v.number(),
    summary: PlanSummarySchema,
    attention: v.array(
      v.strictObject({
        ruleId: v.string(),
        title: v.string(),
        state: v.string(),
        missing: v.array(v.strictObject({ capability: v.string(), problem: v.string(), fix: v.string() })),
      }),
    ),
  }),
  deployment: ConsoleDeploymentSchema,
});

/** The console projection. */
export type ConsoleView = v.InferOutput<typeof ConsoleViewSchema>;
/** The deployment part of it. */
export type ConsoleDeployment = v.InferOutput<typeof ConsoleDeploymentSchema>;

/**
 * What the console projection is computed from: read models only, plus the time and the deployment reporter's status.
 */
export interface ConsoleInput {
  readonly alerts: AlertsState;
  readonly activity: ActivityState;
  readonly plan: DetectionPlan;
  readonly now: Date;
  /** The configured deployment (absent: not a managed deployment) and its reporter's status, if it runs. */
  readonly deployment?: {
    readonly deploymentId: string;
    readonly authorityUrl: string;
    readonly centralVmId?: string;
    readonly reporter?: ReporterStatus;
  };
}

const newest = (a: { lastSeen: string; id: string }, b: { lastSeen: string; id: string }) =>
  a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.id < b.id ? -1 : 1;
/**
 * The first `k` of a stream in the order of `cmp`, without sorting all of it: 100,000 alerts for the 500 newest cost a
 * comparison each, not a sort.
 */
function topK<T>(k: number, cmp: (a: T, b: T) => number): { offer(x: T): void; sorted(): T[] } {
  const kept: T[] = [];
  return {
    offer(x) {
      if (kept.length >= k && cmp(x, kept[kept.length - 1]!) >= 0) return;
      let lo = 0;
      let hi = kept.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cmp(kept[mid]!, x) <= 0) lo = mid + 1;
        else hi = mid;
      }
      kept.splice(lo, 0, x);
      if (kept.length > k) kept.pop();
    },
    sorted: () => kept,
  };
}

const bump = (m: Record<string, number>, k: string) => {
  m[k] = (m[k] ?? 0) + 1;
};

function consoleAlert(a: AlertView): v.InferOutput<typeof ConsoleAlertSchema> {
  return {
    id: a.id,
    title: a.title,
    ruleId: a.ruleId,
    level: a.level,
    severity: a.severity,
    status: a.status,
    assignee: a.assignee ?? null,
    disposition: a.disposition ?? null,
    affectedSystems: a.affectedSystems.slice(0, 20),
    evidenceCount: a.evidenceCount,
    firstSeen: a.firstSeen,
    lastSeen: a.lastSeen,
    incidentId: a.incidentId ?? null,
  };
}

/** The start of the hour of `now`, and of each of the 23 before it, in milliseconds. */
const hourStart = (now: Date) => Math.floor(now.getTime() / 3_600_000) * 3_600_000;

function alertSummary(s: AlertsState, now: Date): ConsoleView['alerts'] {
  const byStatus: Record<string, number> = { open: 0, in_review: 0, dismissed: 0 };
  const perHourByLevel: Record<string, number[]> = {};
  const from = hourStart(now) - 23 * 3_600_000;
  const openBySeverity: Record<string, number> = {};
  let unassigned = 0;
  let activeCount = 0;
  const newestActive = topK<AlertView>(CONSOLE_ALERTS, newest);
  // Times are compared as text first (an hour before the window's start, for any zone offset): most alerts are older.
  const earliest = new Date(from - 86_400_000).toISOString();
  for (const a of s.alerts.values()) {
    bump(byStatus, a.status);
    if (a.firstSeen >= earliest) {
      const hour = Math.floor(((epochMillisOf(a.firstSeen) ?? 0) - from) / 3_600_000);
      if (hour >= 0 && hour < 24) (perHourByLevel[a.level] ??= Array.from({ length: 24 }, () => 0))[hour]!++;
    }
    if (a.status === 'dismissed') continue;
    bump(openBySeverity, a.level);
    if (a.assignee === undefined) unassigned++;
    activeCount++;
    newestActive.offer(a);
  }
  const active = newestActive.sorted();
  return {
    total: s.alerts.size,
    byStatus,
    openBySeverity,
    unassigned,
    perHourByLevel,
    items: active.map(consoleAlert),
    truncated: activeCount > CONSOLE_ALERTS,
  };
}

function incidentSummary(s: AlertsState): ConsoleView['incidents'] {
  const byStatus: Record<string, number> = {};
  const all = [...s.incidents.values()];
  for (const i of all) bump(byStatus, i.status);
  const items = all
    .sort(newest)
    .slice(0, CONSOLE_INCIDENTS)
    .map((i) => ({
      id: i.id,
      title: i.title,
      origin: i.origin,
      status: i.status,
      severity: incidentRollup(s, i).severity,
      assignee: i.assignee ?? null,
      alertCount: i.alertIds.length,
      affectedSystems: i.entities.slice(0, 20),
      firstSeen: i.firstSeen,
      lastSeen: i.lastSeen,
    }));
  return { total: all.length, byStatus, items, truncated: all.length > CONSOLE_INCIDENTS };
}

/** Events of an activity in the hours from `fromHour` (a `YYYY-MM-DDTHH` string) on. */
const since = (a: Activity, fromHour: string) => a.hours.reduce((n, [h, c]) => (h >= fromHour ? n + c : n), 0);

function rates(a: Activity, now: Date): { eventsLastHour: number; events24h: number; perHour: number[] } {
  const hourOf = (ms: number) => new Date(ms).toISOString().slice(0, 13);
  const base = hourStart(now);
  const perHour = Array.from({ length: 24 }, (_, i) => hourOf(base - (23 - i) * 3_600_000)).map(
    (h) => a.hours.find(([x]) => x === h)?.[1] ?? 0,
  );
  return { eventsLastHour: since(a, hourOf(base)), events24h: since(a, hourOf(base - 23 * 3_600_000)), perHour };
}

function systemSummary(s: ActivityState, now: Date): ConsoleView['systems'] {
  const live = (a: Activity) => now.getTime() - (epochMillisOf(a.lastReportAt) ?? 0) <= LIVE_MS;
  const all = [...s.systems.values()].sort((a, b) =>
    a.lastReportAt < b.lastReportAt ? 1 : a.lastReportAt > b.lastReportAt ? -1 : a.key < b.key ? -1 : 1,
  );
  const items = all.slice(0, CONSOLE_SYSTEMS).map((a) => {
    const { eventsLastHour, events24h } = rates(a, now);
    return {
      name: a.key,
      adapter: a.adapter,
      live: live(a),
      lastReportAt: a.lastReportAt,
      lastEventTime: a.lastEventTime,
      events: a.events,
      eventsLastHour,
      events24h,
    };
  });
  return {
    total: all.length,
    live: all.filter(live).length,
    items,
    truncated: all.length > CONSOLE_SYSTEMS,
    untrackedEvents: s.untracked,
  };
}

/** What to do when the central VM is lost (docs/setup-protocol.md, docs/installer.md). */
export function recoveryAction(authorityUrl: string): string {
  return (
    `Sign in to the setup authority (${authorityUrl}), open this deployment's setup session and reveal its ` +
    `single-use recovery token (lrc_...), ` +
    'then run the installer with --recovery against the same VM ids (docs/installer.md); every remote collector must ' +
    'then re-enroll with the reinstalled central VM.'
  );
}

/** The deployment's state from what this instance knows: whether its snapshots reach the setup authority. */
export function deploymentState(d: ConsoleInput['deployment'], now: Date): ConsoleDeployment {
  const none = {
    deploymentId: null,
    authorityUrl: null,
    centralVmId: null,
    lastAttemptAt: null,
    lastDeliveredAt: null,
    authorityStatus: null,
    failingSince: null,
    lastError: null,
  };
  if (!d) return { state: 'not_configured', ...none, centralMissing: { likely: false, recoveryAction: null } };
  const r = d.reporter;
  // A first attempt still in flight is neither delivered nor failed yet.
  const state = r?.failingSince ? 'not_delivered' : r?.lastDeliveredAt ? 'reporting' : 'not_yet_reported';
  const silentSince = r?.failingSince ?? null;
  const likely =
    silentSince !== null &&
    now.getTime() - (epochMillisOf(r?.lastDeliveredAt ?? silentSince) ?? now.getTime()) >
      AUTHORITY_HEARTBEAT_TIMEOUT_S * 1000;
  return {
    state,
    deploymentId: d.deploymentId,
    authorityUrl: d.authorityUrl,
    centralVmId: d.centralVmId ?? null,
    lastAttemptAt: r?.lastAttemptAt ?? null,
    lastDeliveredAt: r?.lastDeliveredAt ?? null,
    authorityStatus: r?.authorityStatus ?? null,
    failingSince: r?.failingSince ?? null,
    lastError: r?.lastError ?? null,
    centralMissing: { likely, recoveryAction: recoveryAction(d.authorityUrl) },
  };
}

/**
 * The console projection (spec 5.2): alerts, incidents, systems, sources, the plan and the
 * deployment, with no raw log content — no evidence, event attributes, match values or
 * rawReference, only names (rules, systems, sources), counts, states and times.
 */
export function consoleView(input: ConsoleInput): ConsoleView {
  const { plan, now } = input;
  return {
    generatedAt: now.toISOString(),
    alerts: alertSummary(input.alerts, now),
    incidents: incidentSummary(input.alerts),
    systems: systemSummary(input.activity, now),
    sources: [...input.activity.sources.values()]
      .sort((a, b) => (a.key < b.key ? -1 : 1))
      .map((a) => ({ adapter: a.key, lastReportAt: a.lastReportAt, events: a.events, ...rates(a, now) })),
    detectionPlan: {
      generatedAt: plan.generatedAt,
      freshnessHours: plan.freshnessHours,
      summary: plan.summary,
      attention: plan.rules
        .filter((r) => r.enabled && r.state !== 'ready')
        .slice(0, 100)
        .map((r) => ({
          ruleId: r.ruleId,
          title: r.title,
          state: r.state,
          missing: r.missingCapabilities.map((m) => ({ ...m })),
        })),
    },
    deployment: deploymentState(input.deployment, now),
  };
}
