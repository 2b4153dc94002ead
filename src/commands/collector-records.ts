import type { NormalizedEvent } from '../events/normalized-event.js';
import type { Fact } from '../collector-protocol/envelope.js';

/** Why a collector submission was refused: the `attributes.reason` of its rejection event. */
export type SubmissionRejectionReason =
  | 'bad_signature' | 'equivocation' | 'replay' | 'sequence_gap' | 'unknown_collector' | 'collector_mismatch' | 'malformed';

/** Why an enrollment was refused. */
export type EnrollmentRejectionReason = 'unknown_token' | 'token_used' | 'token_expired' | 'collector_mismatch' | 'key_reused' | 'malformed';

/** The collector submission result (spec 2.8). */
export interface SubmissionResult {
  readonly collectorId: string;
  readonly sequence: number;
  readonly graph: { readonly entities: number; readonly relationships: number };
  readonly acceptedEvents: number;
}

/** An admin issued a single-use enrollment token for a collector id; only its hash is kept. */
export interface CollectorEnrollmentTokenIssued {
  readonly tokenId: string;
  readonly collectorId: string;
  readonly tokenHash: string;
  readonly expiresAt: string;
}

/** A collector enrolled a key: a new epoch begins, its sequence restarts at 1. */
export interface CollectorEnrolled {
  readonly collectorId: string;
  readonly epoch: number;
  readonly tokenId: string;
  /** The raw 32-byte Ed25519 public key, standard base64. */
  readonly publicKey: string;
  readonly keyFingerprint: string;
}

/** An enrollment was refused (a security event: it carries a NormalizedEvent). */
export interface CollectorEnrollmentRejected {
  readonly reason: EnrollmentRejectionReason;
  readonly collectorId: string | null;
  readonly event: NormalizedEvent;
}

/** A signed submission was accepted: its facts and the events not already stored. */
export interface CollectorSubmissionAccepted {
  readonly collectorId: string;
  readonly epoch: number;
  readonly sequence: number;
  /** SHA-256 hex of the signed bytes. */
  readonly digest: string;
  /** The signature, standard base64, kept so the submission can be re-verified from the log. */
  readonly signature: string;
  readonly collectedAt: string;
  readonly facts: readonly Fact[];
  readonly events: readonly NormalizedEvent[];
  readonly result: SubmissionResult;
}

/** A submission was refused; the event lets detection rules alert on it. */
export interface CollectorSubmissionRejected {
  readonly reason: SubmissionRejectionReason;
  readonly collectorId: string | null;
  readonly event: NormalizedEvent;
}
