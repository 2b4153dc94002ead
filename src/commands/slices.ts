import type { CollectorsState } from '../projections/collectors.js';
import type { EvidenceLookup } from '../projections/evidence.js';
import type { WriteModels } from '../projections/models.js';

/**
 * What a collector submission reads: the collectors, and stored events for idempotency. Every
 * other decider takes one of the write side's models by its accessor (`m.alerts`, `m.detection`).
 */
export interface SubmissionState {
  readonly collectors: CollectorsState;
  readonly evidence: EvidenceLookup;
}

/** The collectors and the evidence lookup a collector submission is decided against. */
export const submissionSlice = (m: WriteModels): SubmissionState => ({ collectors: m.collectors, evidence: m });
