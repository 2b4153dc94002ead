import type { ConsoleSessions } from '../projections/console-sessions.js';
import { COLLECTORS, type CollectorsState } from '../projections/collectors.js';
import type { AlertsState } from '../projections/alerts.js';
import type { DetectionState } from '../projections/detection.js';
import type { EvidenceLookup } from '../projections/evidence.js';
import type { WriteModels } from '../projections/models.js';

/**
 * The slices of the write side's models that deciders take: each decider names the state it
 * reads, and its caller picks that slice from the models (the pattern of src/setup/models.ts).
 */
export const alertsSlice = (m: WriteModels): AlertsState => m.alerts;
export const detectionSlice = (m: WriteModels): DetectionState => m.detection;
export const collectorsSlice = (m: WriteModels): CollectorsState => m.collectors;

/** What a collector submission reads: the collectors, and stored events for idempotency. */
export interface SubmissionState {
  readonly collectors: CollectorsState;
  readonly evidence: EvidenceLookup;
}
export const submissionSlice = (m: WriteModels): SubmissionState => ({ collectors: collectorsSlice(m), evidence: m });
export const consoleSessionsSlice = (m: WriteModels): ConsoleSessions => m.consoleSessions;
