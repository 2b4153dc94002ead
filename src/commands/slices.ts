import type { ConsoleSessions } from '../projections/console-sessions.js';
import { COLLECTORS, type CollectorsState } from '../projections/collectors.js';
import type { AlertsState } from '../projections/alerts.js';
import type { DetectionState } from '../projections/detection.js';
import type { EvidenceLookup } from '../projections/evidence.js';
import type { ReadModels } from '../projections/runtime.js';

/**
 * The slices of the write side's models that deciders take: each decider names the state it
 * reads, and its caller picks that slice from the models (the pattern of src/setup/models.ts).
 */
export const alertsSlice = (m: ReadModels): AlertsState => m.state<AlertsState>('alerts');
export const detectionSlice = (m: ReadModels): DetectionState => m.state<DetectionState>('detection');
export const collectorsSlice = (m: ReadModels): CollectorsState => m.state<CollectorsState>(COLLECTORS);

/** What a collector submission reads: the collectors, and stored events for idempotency. */
export interface SubmissionState {
  readonly collectors: CollectorsState;
  readonly evidence: EvidenceLookup;
}
export const submissionSlice = (m: ReadModels): SubmissionState => ({ collectors: collectorsSlice(m), evidence: m });
export const consoleSessionsSlice = (m: ReadModels): ConsoleSessions => m.state<ConsoleSessions>('console-sessions');
