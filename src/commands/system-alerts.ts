import { alertIdOf } from './alerting/alert-facts.js';
import type { AlertRaised, AlertReviewed } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';

/** The built-in detection identity of silent sources and collectors. */
export const SOURCE_SILENT_RULE = 'vigil.source-silent';
/** The built-in detection identity of the store's disk past a watermark. */
export const DISK_LOW_RULE = 'vigil.disk-low';
/** The built-in detection identity of a rule stopped for going over its time budget (for rule_admins). */
export const RULE_QUARANTINED_RULE = 'vigil.rule-quarantined';
/** The built-in detection identity of a witness that refused the instance's checkpoint (docs/log.md, "Witnesses"). */
export const WITNESS_REFUSED_RULE = 'vigil.witness-refused';
/** How Vigil's own checks appear in an alert's review history. */
export const SYSTEM_AUTHENTICATION = 'system';

/** A fresh alert id for a built-in rule, unique among the alerts (the pattern of src/commands/alerting/evaluate.ts). */
export function systemAlertId(alerts: AlertsState, ruleId: string, groupKey: string, seed: string): string {
  const base = alertIdOf(ruleId, groupKey, seed);
  let id = base;
  for (let n = 2; alerts.alerts.has(id); n++) id = `${base}-${n}`;
  return id;
}

/** What a built-in check states about the alert it raises. */
export interface SystemAlert {
  readonly alertId: string;
  readonly ruleId: string;
  readonly groupKey: string;
  readonly title: string;
  readonly level: 'medium' | 'high' | 'critical';
  readonly severity: number;
  /** The facts the check found, shown as the alert's match reason. */
  readonly facts: Readonly<Record<string, string | number | null>>;
  readonly at: string;
  /** Tags beside `vigil.self-monitoring` (who the alert is for). */
  readonly tags?: readonly string[];
}

/** The `AlertRaised` of a built-in check: certain (confidence 1), no evidence events, the facts as its match reason. */
export function systemAlertRaised(a: SystemAlert): AlertRaised {
  return {
    alertId: a.alertId,
    ruleId: a.ruleId,
    groupKey: a.groupKey,
    title: a.title,
    author: 'Vigil',
    level: a.level,
    severity: a.severity,
    confidence: 1,
    matchReason: {
      selections: [a.ruleId],
      fields: Object.entries(a.facts).map(([field, value]) => ({ selection: a.ruleId, field, modifiers: [], value })),
      keywords: [],
    },
    evidence: [],
    affectedSystems: [],
    firstSeen: a.at,
    lastSeen: a.at,
    tags: ['vigil.self-monitoring', ...(a.tags ?? [])],
  };
}

/** The review-history entry that resolves a built-in alert by itself; none when it is gone or already dismissed. */
export function systemResolution(
  alerts: AlertsState,
  alertId: string,
  ruleId: string,
  reason: string,
): AlertReviewed | undefined {
  const alert = alerts.alerts.get(alertId);
  if (!alert || alert.status === 'dismissed') return undefined;
  return {
    alertId,
    from: alert.status,
    to: 'dismissed',
    reason,
    principal: ruleId,
    authentication: SYSTEM_AUTHENTICATION,
  };
}
