import { createHash } from 'node:crypto';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { CorrelationReason, EvidenceRef } from '../../events/detection-records.js';
import type { CorrelationFire } from '../../detection/correlate.js';
import type { CompiledCorrelation, CompiledSigma } from '../../detection/types.js';

/** Entity kinds that name an affected system (hosts, mesh nodes, addresses). */
const SYSTEM_KINDS = ['host:', 'node:', 'ip:'];
/** Affected systems kept per event. */
const SYSTEMS_PER_EVENT = 32;

/** The hosts, nodes and addresses an event involves, sorted. */
export function affectedSystems(e: NormalizedEvent): string[] {
  return e.entityKeys
    .filter((k) => SYSTEM_KINDS.some((p) => k.startsWith(p)))
    .slice(0, SYSTEMS_PER_EVENT)
    .sort();
}

/** A one-line summary of an event for an alert's evidence list (never the raw record). */
export function evidenceOf(e: NormalizedEvent): EvidenceRef {
  const actor = typeof e.actor?.user === 'string' ? ` user ${e.actor.user}` : '';
  const from = typeof e.sourceEndpoint?.ip === 'string' ? ` from ${e.sourceEndpoint.ip}` : '';
  const to =
    typeof e.destinationEndpoint?.ip === 'string'
      ? ` to ${e.destinationEndpoint.ip}`
      : typeof e.destinationEndpoint?.host === 'string'
        ? ` to ${e.destinationEndpoint.host}`
        : '';
  return {
    eventId: e.id,
    time: e.time,
    summary: `${e.source.adapter} ${e.class}/${e.activity} ${e.outcome}${actor}${from}${to}`.slice(0, 240),
  };
}

const STATUS_BASE: Readonly<Record<string, number>> = { stable: 0.8, test: 0.7, experimental: 0.6 };

/**
 * Alert confidence in 0..1 (docs/detections.md): the rule's maturity (stable 0.8, test 0.7,
 * experimental 0.6, otherwise 0.5), +0.1 for a correlation (several events agree), +0.02 per
 * further piece of evidence up to five, at most 0.99.
 */
export function confidenceOf(rule: CompiledSigma, evidenceCount: number): number {
  const base = STATUS_BASE[rule.status ?? ''] ?? 0.5;
  const c = base + (rule.kind === 'correlation' ? 0.1 : 0) + 0.02 * Math.min(Math.max(evidenceCount - 1, 0), 5);
  return Math.round(Math.min(c, 0.99) * 100) / 100;
}

/** The match reason of a correlation fire. */
export function correlationReason(c: CompiledCorrelation, fire: CorrelationFire): CorrelationReason {
  const condition = Object.fromEntries(Object.entries(c.condition).filter(([, v]) => typeof v === 'number')) as Record<
    string,
    number
  >;
  return {
    correlation: c.type,
    groupBy: fire.groupValues,
    value: fire.value,
    condition,
    rules: c.rules,
    timespan: `${Math.round(c.timespanMs / 1000)}s`,
    ...(c.field !== undefined ? { field: c.field } : {}),
  };
}

/** A deterministic alert id from the rule, the group and the first evidence. */
export function alertIdOf(ruleId: string, groupKey: string, firstEventId: string): string {
  return `alr_${createHash('sha256').update(`${ruleId}\0${groupKey}\0${firstEventId}`).digest('hex').slice(0, 24)}`;
}

/** A deterministic incident id from its first alert. */
export function incidentIdOf(firstAlertId: string): string {
  return `inc_${createHash('sha256').update(firstAlertId).digest('hex').slice(0, 24)}`;
}
