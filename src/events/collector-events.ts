import * as v from 'valibot';
import { FactSchema } from './collector-protocol/envelope.js';
import { NormalizedEventSchema } from './normalized-event.js';

/** Why a collector submission was refused: the `attributes.reason` of its rejection event. */
export const SUBMISSION_REJECTION_REASONS = [
  'bad_signature',
  'equivocation',
  'replay',
  'sequence_gap',
  'unknown_collector',
  'collector_mismatch',
  'malformed',
] as const;

/** Why a collector enrollment was refused. */
export const ENROLLMENT_REJECTION_REASONS = [
  'unknown_token',
  'token_used',
  'token_expired',
  'collector_mismatch',
  'key_reused',
  'malformed',
] as const;

/** The collector submission result (spec 2.8), kept so an exact retry answers it again. */
export const SubmissionResultSchema = v.strictObject({
  collectorId: v.string(),
  sequence: v.number(),
  graph: v.strictObject({ entities: v.number(), relationships: v.number() }),
  acceptedEvents: v.number(),
});

/**
 * `CollectorEnrollmentTokenIssued`: an admin issued a single-use enrollment token for a collector id; only its hash is
 * kept.
 */
export const CollectorEnrollmentTokenIssuedSchema = v.strictObject({
  tokenId: v.string(),
  collectorId: v.string(),
  tokenHash: v.string(),
  expiresAt: v.string(),
});

/** `CollectorEnrolled`: a collector enrolled a key; a new epoch begins and its sequence restarts at 1. */
export const CollectorEnrolledSchema = v.strictObject({
  collectorId: v.string(),
  epoch: v.number(),
  tokenId: v.string(),
  /** The raw 32-byte Ed25519 public key, standard base64. */
  publicKey: v.string(),
  keyFingerprint: v.string(),
});

/** `CollectorEnrollmentRejected`: an enrollment was refused (a security event: it carries a NormalizedEvent). */
export const CollectorEnrollmentRejectedSchema = v.strictObject({
  reason: v.picklist(ENROLLMENT_REJECTION_REASONS),
  collectorId: v.nullable(v.string()),
  event: NormalizedEventSchema,
});

/**
 * `CollectorSubmissionAccepted`: a signed submission was accepted, with its facts and the events not already stored.
 */
export const CollectorSubmissionAcceptedSchema = v.strictObject({
  collectorId: v.string(),
  epoch: v.number(),
  sequence: v.number(),
  /** SHA-256 hex of the signed bytes. */
  digest: v.string(),
  /** The signature, standard base64, kept so the submission can be re-verified from the log. */
  signature: v.string(),
  collectedAt: v.string(),
  facts: v.array(FactSchema),
  events: v.array(NormalizedEventSchema),
  result: SubmissionResultSchema,
});

/** `CollectorSubmissionRejected`: a submission was refused; its event lets detection rules alert on it. */
export const CollectorSubmissionRejectedSchema = v.strictObject({
  reason: v.picklist(SUBMISSION_REJECTION_REASONS),
  collectorId: v.nullable(v.string()),
  event: NormalizedEventSchema,
});

/** The collector events of the instance, by stored type name. */
export const COLLECTOR_EVENTS = {
  CollectorEnrollmentTokenIssued: CollectorEnrollmentTokenIssuedSchema,
  CollectorEnrolled: CollectorEnrolledSchema,
  CollectorEnrollmentRejected: CollectorEnrollmentRejectedSchema,
  CollectorSubmissionAccepted: CollectorSubmissionAcceptedSchema,
  CollectorSubmissionRejected: CollectorSubmissionRejectedSchema,
} as const;
