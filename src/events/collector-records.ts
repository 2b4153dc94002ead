import type * as v from 'valibot';
import type {
  ENROLLMENT_REJECTION_REASONS,
  SUBMISSION_REJECTION_REASONS,
  SubmissionResultSchema,
} from './collector-events.js';
import type { EventData } from './union.js';

/** Why a collector submission was refused: the `attributes.reason` of its rejection event. */
export type SubmissionRejectionReason = (typeof SUBMISSION_REJECTION_REASONS)[number];
/** Why an enrollment was refused. */
export type EnrollmentRejectionReason = (typeof ENROLLMENT_REJECTION_REASONS)[number];
/** The collector submission result (spec 2.8). */
export type SubmissionResult = v.InferOutput<typeof SubmissionResultSchema>;
/** An admin issued a single-use enrollment token for a collector id; only its hash is kept. */
export type CollectorEnrollmentTokenIssued = EventData<'CollectorEnrollmentTokenIssued'>;
/** A collector enrolled a key: a new epoch begins, its sequence restarts at 1. */
export type CollectorEnrolled = EventData<'CollectorEnrolled'>;
/** An enrollment was refused (a security event: it carries a NormalizedEvent). */
export type CollectorEnrollmentRejected = EventData<'CollectorEnrollmentRejected'>;
/** A signed submission was accepted: its facts and the events not already stored. */
export type CollectorSubmissionAccepted = EventData<'CollectorSubmissionAccepted'>;
/** A submission was refused; the event lets detection rules alert on it. */
export type CollectorSubmissionRejected = EventData<'CollectorSubmissionRejected'>;
