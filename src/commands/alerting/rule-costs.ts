/** What running one rule has cost since the process started: evaluations, matches and time. */
export interface RuleCost {
  evaluations: number;
  matches: number;
  ms: number;
}

/**
 * Per-rule cost, counted by the detector (src/commands/alerting/rule-runner.ts) and read by
 * `/metrics` and the rule's page. Counted in memory since the process started, on the node that
 * runs detection: it is a measurement, not a fact of the log.
 */
export interface RuleCosts {
  add(ruleId: string, evaluations: number, matches: number, ms: number): void;
  of(ruleId: string): RuleCost | undefined;
  all(): IterableIterator<[string, Readonly<RuleCost>]>;
  /** When counting started (ISO 8601). */
  readonly since: string;
}

/** An empty cost registry. */
export function createRuleCosts(now: () => Date = () => new Date()): RuleCosts {
  const costs = new Map<string, RuleCost>();
  return {
    since: now().toISOString(),
    add(ruleId, evaluations, matches, ms) {
      const cost = costs.get(ruleId);
      if (!cost) costs.set(ruleId, { evaluations, matches, ms });
      else {
        cost.evaluations += evaluations;
        cost.matches += matches;
        cost.ms += ms;
      }
    },
    of: (ruleId) => costs.get(ruleId),
    all: () => costs.entries(),
  };
}
