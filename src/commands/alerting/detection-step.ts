import type { CommandContext, Decision, DomainEvent } from '../decision.js';
import { eventsOf } from '../../events/record-types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { WriteModels } from '../../projections/models.js';
import { alertingStateOf, evaluateEvidence, type AlertSummary, type DetectionSettings } from './evaluate.js';
import type { IncidentSummary } from './incident-correlation.js';
import { DEFAULT_RULE_BUDGET } from './rule-budget.js';
import { createRuleCosts } from './rule-costs.js';
import { createRuleRunner, type RunRules } from './rule-runner.js';
import { intelAlerts } from './intel-alerts.js';

/** What a batch's evidence raised, for the command's answer. */
export interface Detections {
  readonly alerts: readonly AlertSummary[];
  readonly incidents: readonly IncidentSummary[];
}

/** No detections: what a batch without evidence raised. */
export const NO_DETECTIONS: Detections = { alerts: [], incidents: [] };

/** What a detector returns for a batch's evidence: the events to append after it, and what they raised. */
export interface DetectorOutcome extends Detections {
  readonly events: readonly DomainEvent[];
}

/** Evaluates a batch's evidence against the models a decision read; pure but for measuring rules' cost. */
export type Detector<M> = (models: M, evidence: readonly NormalizedEvent[], ctx: CommandContext) => DetectorOutcome;

/** A decision with the detection step done: its result carries what the batch raised. */
export type Detected<R> = Decision<{ readonly result: R; readonly detections: Detections }>;

/**
 * The detection step of a command: the decision's events and `facts` (the request's access and
 * audit records) form one batch; the evidence that batch carries (events ingested, raw, collector,
 * access) is evaluated by `detector`, and the hits, alerts and incidents it raises are appended to
 * the same batch. A rejected decision keeps its rejection; the events it still records (a collector
 * rejection) are evaluated too. A service without a detector refuses evidence outright. Pure.
 */
export function detectIn<M, R>(
  models: M,
  decision: Decision<R>,
  facts: readonly DomainEvent[],
  ctx: CommandContext,
  detector: Detector<M> | undefined,
): Detected<R> {
  const own = facts.length > 0 ? [...(decision.events ?? []), ...facts] : (decision.events ?? []);
  const evidence = own.flatMap((e) => eventsOf(e.type, e.data));
  if (evidence.length > 0 && !detector) throw new Error('a batch carries evidence on a service that runs no detection');
  const outcome = evidence.length > 0 ? detector!(models, evidence, ctx) : undefined;
  const events = outcome && outcome.events.length > 0 ? [...own, ...outcome.events] : own;
  const detections: Detections = outcome ? { alerts: outcome.alerts, incidents: outcome.incidents } : NO_DETECTIONS;
  return decision.ok
    ? { ok: true, events, result: { result: decision.result, detections } }
    : { ok: false, rejection: decision.rejection, events };
}

/**
 * The instance's detector: Sigma rules under their time budget, correlations and incidents over
 * the write side's models, and the threat intelligence indicators (intel-alerts.ts). `run` measures
 * (rule-runner.ts); by default with the default budget,
 * counting costs nobody reads.
 */
export function instanceDetector(
  settings: DetectionSettings,
  run: RunRules = createRuleRunner(DEFAULT_RULE_BUDGET, createRuleCosts()),
): Detector<WriteModels> {
  return (models, evidence, ctx) => {
    const out = evaluateEvidence(alertingStateOf(models), evidence, ctx, settings, run);
    const intel = intelAlerts(models.intel, models.alerts, evidence, ctx);
    if (intel.events.length === 0) return out;
    return {
      events: [...out.events, ...intel.events],
      alerts: [...out.alerts, ...intel.alerts],
      incidents: out.incidents,
    };
  };
}

/** Detection settings from the instance configuration. */
export function detectionSettingsOf(config: {
  readonly detection: { readonly incidentWindowMinutes: number };
}): DetectionSettings {
  return { incidentWindowMs: config.detection.incidentWindowMinutes * 60_000 };
}
