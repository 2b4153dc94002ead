import type { NormalizedEvent } from '../events/normalized-event.js';
import type { EnrollmentRejectionReason, SubmissionRejectionReason } from '../events/collector-records.js';

/** What is known about a refused collector request, to describe it as evidence. */
export interface RefusalFacts {
  readonly requestId: string;
  readonly at: string;
  readonly sourceAddress: string;
  readonly principal?: string;
  readonly collectorId?: string;
  readonly sequence?: number;
  readonly expectedSequence?: number;
  readonly message: string;
}

const SEVERITY: Readonly<Record<SubmissionRejectionReason | EnrollmentRejectionReason, number>> = {
  equivocation: 8,
  bad_signature: 7,
  replay: 6,
  collector_mismatch: 6,
  unknown_collector: 4,
  sequence_gap: 2,
  malformed: 2,
  unknown_token: 5,
  token_used: 6,
  token_expired: 4,
  key_reused: 5,
};

/** Reasons that say something about the key or the stream (findings) rather than who is calling (identity). */
const FINDINGS = new Set(['bad_signature', 'equivocation', 'replay', 'sequence_gap', 'malformed', 'key_reused']);

/**
 * The NormalizedEvent of a refused collector submission or enrollment (source `vigil/collector`),
 * so Sigma rules with `logsource: {product: vigil, service: collector}` can alert on it.
 */
export function refusalEvent(
  eventClass: 'collector_submission_rejected' | 'collector_enrollment_rejected',
  reason: SubmissionRejectionReason | EnrollmentRejectionReason,
  f: RefusalFacts,
): NormalizedEvent {
  const ip = f.sourceAddress !== 'unknown' ? f.sourceAddress : undefined;
  return {
    schemaVersion: 1,
    id: `vigil:collector:${f.requestId}`,
    category: FINDINGS.has(reason) ? 'finding' : 'identity',
    class: eventClass,
    activity: reason,
    outcome: 'failure',
    time: f.at,
    ingestedAt: f.at,
    severity: SEVERITY[reason],
    source: { adapter: 'vigil', instance: 'collector', recordId: f.requestId },
    entityKeys: [
      ...(f.collectorId !== undefined ? [`collector:${f.collectorId}`] : []),
      ...(f.principal !== undefined ? [`user:${f.principal}`] : []),
      ...(ip ? [`ip:${ip}`] : []),
    ],
    actor: f.principal !== undefined ? { user: f.principal } : null,
    sourceEndpoint: ip ? { ip } : null,
    service: { name: 'vigil-collector' },
    attributes: {
      reason,
      collectorId: f.collectorId ?? null,
      message: f.message.slice(0, 512),
      ...(f.sequence !== undefined ? { sequence: f.sequence } : {}),
      ...(f.expectedSequence !== undefined ? { expectedSequence: f.expectedSequence } : {}),
      principal: f.principal ?? null,
      source_ip: f.sourceAddress,
    },
  };
}
