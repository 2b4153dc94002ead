/**
 * Runs a batch's evidence through the active rules under their time budget: the rules V8 can run
 * in bounded time on the request thread, each evaluation timed; the others in a worker thread with
 * a deadline (isolated-rules.ts). A rule over its budget is reported as an overrun (evaluate.ts
 * quarantines it, in the log); every rule's cost is added to `costs`. This is the detector's one
 * impure step: what it measured enters the log as facts, so replay never measures again.
 */
import type { RuleHit } from '../../detection/correlate.js';
import { createMeter, resetMeter, type RuleMatch, type RuleMeter, type RuleSet } from '../../detection/engine.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { activeRuleSet, type DetectionState } from '../../projections/detection.js';
import { isolatedRules, type IsolatedRules } from './isolated-rules.js';
import { budgetMs, eventsText, type RuleBudget, type RuleOverrun } from './rule-budget.js';
import type { RuleCosts } from './rule-costs.js';

/** What running the rules over a batch gave: matches, hits for correlations, and the rules over budget. */
export interface RuleRun {
  readonly matches: RuleMatch[];
  readonly hits: RuleHit[];
  readonly overruns: readonly RuleOverrun[];
}

/** Runs the detection state's active rules over a batch's evidence. */
export type RunRules = (detection: DetectionState, evidence: readonly NormalizedEvent[]) => RuleRun;

/** The rules over budget in a meter: more time on the batch than both the batch and the per-event budget allow. */
function inlineOverruns(set: RuleSet, meter: RuleMeter, budget: RuleBudget): RuleOverrun[] {
  const over: RuleOverrun[] = [];
  for (const i of meter.touched) {
    const evaluations = meter.evaluations[i]!;
    const ms = meter.ms[i]!;
    const limit = budgetMs(budget, evaluations);
    if (ms <= limit) continue;
    const sample = meter.slowestEvent[i];
    over.push({
      ruleId: set.inline[i]!.id,
      reason:
        `took ${Math.round(ms)} ms on ${eventsText(evaluations)} (budget ${Math.round(limit)} ms: ` +
        `${budget.batchMs} ms a batch or ${budget.eventMicros} µs an event), ${Math.round(meter.slowestMs[i]!)} ms ` +
        `on its slowest event`,
      budgetMs: limit,
      measuredMs: ms,
      evaluations,
      ...(sample !== undefined ? { sampleEventId: sample } : {}),
    });
  }
  return over;
}

/**
 * How many batches are timed exactly after the rules change or an event was slow: timing every
 * evaluation costs about 5 % of detection, so otherwise one in `METER_SAMPLE` is (engine.ts).
 */
export const EXACT_BATCHES = 16;

/**
 * A runner under `budget`, counting into `costs`; it keeps a meter and a worker per rule set. Rules
 * are judged against the budget only in batches timed exactly: the first `EXACT_BATCHES` of a rule
 * set, and those after a batch in which an event's rules took longer than `budget.eventMicros` in
 * all (an attacker's line comes back; the next one is timed rule by rule).
 */
export function createRuleRunner(budget: RuleBudget, costs: RuleCosts): RunRules {
  let metered: { set: RuleSet; meter: RuleMeter; exactLeft: number } | undefined;
  let isolated: { set: RuleSet; rules: IsolatedRules } | undefined;
  return (detection, evidence) => {
    const set = activeRuleSet(detection);
    if (metered?.set !== set)
      metered = {
        set,
        meter: createMeter(set.inline.length, true, budget.eventMicros / 1000),
        exactLeft: EXACT_BATCHES,
      };
    const { meter } = metered;
    resetMeter(meter);
    meter.exact = metered.exactLeft > 0;
    const { matches, hits } = set.matchEvents(evidence, meter);
    for (const i of meter.touched) costs.add(set.inline[i]!.id, meter.evaluations[i]!, meter.matches[i]!, meter.ms[i]!);
    const overruns = meter.exact ? inlineOverruns(set, meter, budget) : [];
    metered.exactLeft = meter.slowEvent !== undefined ? EXACT_BATCHES : Math.max(0, metered.exactLeft - 1);
    if (isolated?.set !== set) {
      isolated?.rules.close();
      isolated =
        set.isolated.length > 0
          ? {
              set,
              rules: isolatedRules(set.isolated.map((rule) => ({ rule, doc: detection.rules.get(rule.id)?.doc }))),
            }
          : undefined;
    }
    if (!isolated) return { matches, hits, overruns };
    const outcome = isolated.rules.run(evidence, budget);
    for (const c of outcome.costs) costs.add(c.ruleId, c.evaluations, c.matches, c.ms);
    const adopted = set.adopt(outcome.found);
    return {
      matches: [...matches, ...adopted.matches],
      hits: [...hits, ...adopted.hits],
      overruns: [...overruns, ...outcome.overruns],
    };
  };
}
