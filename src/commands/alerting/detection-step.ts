import { accept, type CommandContext, type Decision, type DomainEvent } from '../decision.js';
import type { Writer } from '../writer.js';
import { eventsOf } from '../../events/record-types.js';
import type { ReadModels } from '../../projections/runtime.js';
import { alertingStateOf, evaluateEvidence, type AlertSummary, type DetectionSettings } from './evaluate.js';
import type { IncidentSummary } from './incident-correlation.js';

/** What a batch's evidence raised, for the command's answer. */
export interface Detections {
  readonly alerts: readonly AlertSummary[];
  readonly incidents: readonly IncidentSummary[];
}

/** A decision with the detection step done: its result carries what the batch raised. */
export type Detected<R> = Decision<{ readonly result: R; readonly detections: Detections }>;

/**
 * The detection step of a command, in plain sight where commands are executed: the decision's
 * events and `facts` (the request's access and audit records) form one batch; the evidence that
 * batch carries (events ingested, raw, collector, access) is evaluated against the rules, and the
 * hits, alerts and incidents it raises are appended to the same batch. A rejected decision keeps
 * its rejection; the events it still records (a collector rejection) are evaluated too. Pure.
 */
export function detectIn<R>(models: ReadModels, decision: Decision<R>, facts: readonly DomainEvent[], ctx: CommandContext, settings: DetectionSettings): Detected<R> {
  const own = [...(decision.events ?? []), ...facts];
  const evidence = own.flatMap((e) => eventsOf(e.type, e.data));
  const outcome = evidence.length > 0 ? evaluateEvidence(alertingStateOf(models), evidence, ctx, settings) : undefined;
  const events = outcome && outcome.events.length > 0 ? [...own, ...outcome.events] : own;
  const detections: Detections = { alerts: outcome?.alerts ?? [], incidents: outcome?.incidents ?? [] };
  return decision.ok
    ? { ok: true, events, result: { result: decision.result, detections } }
    : { ok: false, rejection: decision.rejection, events };
}

/** Detection settings from the instance configuration. */
export function detectionSettingsOf(config: { readonly detection: { readonly incidentWindowMinutes: number } }): DetectionSettings {
  return { incidentWindowMs: config.detection.incidentWindowMinutes * 60_000 };
}

/**
 * Appends facts that need no decision (access and audit records, refusal summaries) with the
 * detection step: the evidence they carry is evaluated like any other.
 */
export async function recordDetected(writer: Writer, facts: readonly DomainEvent[], ctx: CommandContext, settings: DetectionSettings): Promise<Detections> {
  const outcome = await writer.execute((m) => detectIn(m, accept(facts, undefined), [], ctx, settings), ctx);
  return outcome.ok ? outcome.result.detections : { alerts: [], incidents: [] };
}
