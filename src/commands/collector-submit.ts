import type { Fact, SubmittedEvent } from '../events/collector-protocol/envelope.js';
import type { OpenResult } from '../events/collector-protocol/open-envelope.js';
import { verifyEnvelope } from '../events/collector-protocol/verify-envelope.js';
import { encodeBase64 } from '../kernel/strict-base64.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import { RecordType } from '../events/record-types.js';
import type { SubmissionState } from './slices.js';
import { categoryOf, outcomeOf } from './collector-categories.js';
import type {
  CollectorSubmissionAccepted,
  CollectorSubmissionRejected,
  SubmissionRejectionReason,
  SubmissionResult,
} from '../events/collector-records.js';
import { refusalEvent, type RefusalFacts } from './collector-rejection.js';
import { sequenceVerdict } from './collector-sequence.js';
import { accept, reject, type Decision, type RejectionKind } from './decision.js';
import { newEvents } from './ingest-events.js';

/** A submission as the route hands it over: the opened envelope and who sent it. */
export interface SubmitEnvelope {
  readonly opened: OpenResult;
  /** The collector id the bearer credential is bound to, if any. */
  readonly boundCollectorId?: string;
  readonly principal?: string;
  readonly requestId: string;
  readonly at: string;
  readonly sourceAddress: string;
}

const KIND_OF: Readonly<Record<SubmissionRejectionReason, RejectionKind>> = {
  bad_signature: 'unauthenticated',
  equivocation: 'conflict',
  replay: 'conflict',
  sequence_gap: 'conflict',
  unknown_collector: 'forbidden',
  collector_mismatch: 'forbidden',
  malformed: 'invalid',
};

function refuse(
  cmd: SubmitEnvelope,
  reason: SubmissionRejectionReason,
  message: string,
  extra: {
    kind?: RejectionKind;
    issues?: readonly string[];
    collectorId?: string;
    sequence?: number;
    expectedSequence?: number;
  } = {},
): Decision<never> {
  const facts: RefusalFacts = {
    requestId: cmd.requestId,
    at: cmd.at,
    sourceAddress: cmd.sourceAddress,
    message,
    ...(cmd.principal !== undefined ? { principal: cmd.principal } : {}),
    ...(extra.collectorId !== undefined ? { collectorId: extra.collectorId } : {}),
    ...(extra.sequence !== undefined ? { sequence: extra.sequence } : {}),
    ...(extra.expectedSequence !== undefined ? { expectedSequence: extra.expectedSequence } : {}),
  };
  const data: CollectorSubmissionRejected = {
    reason,
    collectorId: extra.collectorId ?? null,
    event: refusalEvent('collector_submission_rejected', reason, facts),
  };
  const details = {
    reason,
    ...(extra.expectedSequence !== undefined ? { expectedSequence: extra.expectedSequence } : {}),
  };
  return reject(extra.kind ?? KIND_OF[reason], message, {
    details,
    events: [{ type: RecordType.CollectorSubmissionRejected, data }],
    ...(extra.issues ? { issues: extra.issues } : {}),
  });
}

/**
 * A submitted event as stored: category from its class, outcome from its attributes, source
 * `collector`. Completes `e` in place (it is the schema's fresh copy, owned by the decision).
 */
export function toNormalizedEvent(e: SubmittedEvent, collectorId: string): NormalizedEvent {
  const n = e as Mutable<SubmittedEvent> & Partial<Mutable<NormalizedEvent>>;
  n.category = categoryOf(e.class);
  n.outcome = outcomeOf(e.attributes);
  n.attributes.collector_input = { adapter: e.source.adapter, instance: e.source.instance };
  n.source = { adapter: 'collector', instance: collectorId, recordId: e.source.recordId };
  return n as NormalizedEvent;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** How many distinct entities and relationships a payload's facts describe. */
export function factCounts(facts: readonly Fact[]): { entities: number; relationships: number } {
  const entities = new Set<string>();
  const relationships = new Set<string>();
  for (const f of facts) {
    if (f.fact === 'entity') entities.add(f.key);
    else relationships.add(`${f.from}|${f.type}|${f.to}`);
  }
  return { entities: entities.size, relationships: relationships.size };
}

/**
 * Decides a collector submission: the credential's binding, a registered collector, a strictly
 * verified signature under the key of its current epoch, then the sequence rules
 * (collector-sequence.ts). Refusals are recorded with their reason; an exact retry of the last
 * accepted envelope answers its original result and records nothing. Accepted events already
 * stored (by id, same content) are not stored again; an id reused with other content is refused.
 */
export function decideSubmission(state: SubmissionState, cmd: SubmitEnvelope): Decision<SubmissionResult> {
  const { opened } = cmd;
  if (!opened.ok) {
    const who = opened.collectorId !== undefined ? { collectorId: opened.collectorId } : {};
    return refuse(cmd, 'malformed', opened.message, {
      ...who,
      ...(opened.issues ? { issues: opened.issues } : {}),
      ...(opened.fault === 'too_large' ? { kind: 'too_large' as const } : {}),
    });
  }
  const { payload, digest } = opened.envelope;
  const id = { collectorId: payload.collectorId, sequence: payload.sequence };
  if (cmd.boundCollectorId !== undefined && cmd.boundCollectorId !== payload.collectorId) {
    return refuse(
      cmd,
      'collector_mismatch',
      `this credential is bound to another collector than ${payload.collectorId}`,
      id,
    );
  }
  const collector = state.collectors.collectors.get(payload.collectorId);
  if (!collector) return refuse(cmd, 'unknown_collector', `collector ${payload.collectorId} is not enrolled`, id);
  if (!verifyEnvelope(opened.envelope, Buffer.from(collector.publicKey, 'base64'))) {
    return refuse(
      cmd,
      'bad_signature',
      "the signature does not verify under the key of the collector's current enrollment",
      id,
    );
  }
  const expectedSequence = collector.lastSequence + 1;
  switch (sequenceVerdict(collector.lastSequence, collector.lastDigest, payload.sequence, digest)) {
    case 'retry':
      return accept([], collector.lastResult!);
    case 'equivocation':
      return refuse(cmd, 'equivocation', `sequence ${payload.sequence} was already accepted with a different payload`, {
        ...id,
        expectedSequence,
      });
    case 'replay':
      return refuse(
        cmd,
        'replay',
        `sequence ${payload.sequence} is older than the last accepted ${collector.lastSequence}`,
        { ...id, expectedSequence },
      );
    case 'gap':
      return refuse(cmd, 'sequence_gap', `expected sequence ${expectedSequence}, got ${payload.sequence}`, {
        ...id,
        expectedSequence,
      });
    case 'next':
      break;
  }
  const events = payload.events.map((e) => toNormalizedEvent(e, payload.collectorId));
  const { fresh, conflicts } = newEvents(state.evidence, events);
  if (conflicts.length > 0) {
    return refuse(cmd, 'malformed', 'event ids already stored with different content', {
      ...id,
      issues: [...new Set(conflicts)]
        .slice(0, 20)
        .map((c) => `events: id ${JSON.stringify(c)} already stored with different content`),
    });
  }
  const result: SubmissionResult = {
    collectorId: payload.collectorId,
    sequence: payload.sequence,
    graph: factCounts(payload.facts),
    acceptedEvents: events.length,
  };
  const data: CollectorSubmissionAccepted = {
    collectorId: payload.collectorId,
    epoch: collector.epoch,
    sequence: payload.sequence,
    digest,
    signature: encodeBase64(opened.envelope.signature),
    collectedAt: payload.collectedAt,
    facts: payload.facts,
    events: fresh,
    result,
  };
  return accept([{ type: RecordType.CollectorSubmissionAccepted, data }], result);
}
