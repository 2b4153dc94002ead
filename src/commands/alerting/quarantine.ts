import { DetectionRecord, type RuleQuarantined } from '../../events/detection-records.js';
import type { AlertsState } from '../../projections/alerts.js';
import type { DetectionState } from '../../projections/detection.js';
import type { CommandContext, DomainEvent } from '../decision.js';
import { RULE_QUARANTINED_RULE, systemAlertId, systemAlertRaised } from '../system-alerts.js';
import type { RuleOverrun } from './rule-budget.js';

/** Tag of the alerts meant for rule_admins. */
export const RULE_ADMIN_TAG = 'vigil.rule-admin';

/**
 * The quarantine of each rule that went over its budget: a `RuleQuarantined` record (the rule stops
 * evaluating from the next batch on) and a `vigil.rule-quarantined` alert for rule_admins, naming
 * the budget, the measured cost and the event the rule was slowest on. A rule already quarantined,
 * or gone, is skipped; a rule is quarantined once however many overruns name it. Pure.
 */
export function quarantineEvents(
  detection: DetectionState,
  alerts: AlertsState,
  overruns: readonly RuleOverrun[],
  ctx: CommandContext,
): DomainEvent[] {
  const events: DomainEvent[] = [];
  const done = new Set<string>();
  for (const o of overruns) {
    const rule = detection.rules.get(o.ruleId);
    if (!rule || rule.quarantine !== undefined || done.has(o.ruleId)) continue;
    done.add(o.ruleId);
    const alertId = systemAlertId(alerts, RULE_QUARANTINED_RULE, o.ruleId, ctx.now);
    const data: RuleQuarantined = {
      ruleId: o.ruleId,
      reason: o.reason,
      budgetMs: Math.round(o.budgetMs),
      measuredMs: Math.round(o.measuredMs),
      evaluations: o.evaluations,
      ...(o.sampleEventId !== undefined ? { sampleEventId: o.sampleEventId } : {}),
      alertId,
    };
    const title = rule.compiled.title;
    events.push(
      { type: DetectionRecord.RuleQuarantined, data },
      {
        type: DetectionRecord.AlertRaised,
        data: systemAlertRaised({
          alertId,
          ruleId: RULE_QUARANTINED_RULE,
          groupKey: o.ruleId,
          title:
            `Rule quarantined: ${title.slice(0, 200)} ` +
            `(${data.measuredMs} ms against a budget of ${data.budgetMs} ms)`,
          level: 'high',
          severity: 7,
          facts: {
            rule: o.ruleId,
            reason: o.reason,
            budgetMs: data.budgetMs,
            measuredMs: data.measuredMs,
            evaluations: o.evaluations,
            sampleEventId: o.sampleEventId ?? null,
          },
          at: ctx.now,
          tags: [RULE_ADMIN_TAG],
        }),
      },
    );
  }
  return events;
}
