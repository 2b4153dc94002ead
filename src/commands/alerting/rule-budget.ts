/**
 * Rule budgets at run time (docs/detections.md "Rule budgets"): what the configuration says and what
 * an overrun reports. Apart from the runner and the worker, so the configuration's schema reads the
 * defaults without loading the detector.
 */

/** The time a rule may take at run time (config `detection.ruleBudget`, docs/detections.md "Rule budgets"). */
export interface RuleBudget {
  /** A rule may take this long on one batch… */
  readonly batchMs: number;
  /** …or this long per event it was tried on, whichever is more. */
  readonly eventMicros: number;
}

/** The budgets of `detection.ruleBudget` when not configured. */
export const DEFAULT_RULE_BUDGET: RuleBudget = { batchMs: 100, eventMicros: 1000 };

/** A rule's budget for one batch: the batch budget, or its per-event budget times the events it was tried on. */
export function budgetMs(budget: RuleBudget, evaluations: number): number {
  return Math.max(budget.batchMs, (budget.eventMicros * evaluations) / 1000);
}

/** A rule that went over its budget (or failed) while evaluating a batch: it is to be quarantined. */
export interface RuleOverrun {
  readonly ruleId: string;
  readonly reason: string;
  readonly budgetMs: number;
  readonly measuredMs: number;
  readonly evaluations: number;
  readonly sampleEventId?: string;
}

/** `n events`, `1 event`. */
export const eventsText = (n: number): string => `${n} event${n === 1 ? '' : 's'}`;
