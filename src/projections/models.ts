import { activityProjection, type ActivityState } from './activity.js';
import { alertsProjection, type AlertsState } from './alerts.js';
import { collectorsProjection, type CollectorsState } from './collectors.js';
import { consoleSessionsProjection, type ConsoleSessions } from './console-sessions.js';
import { credentialsProjection, type CredentialsState } from './credentials.js';
import { detectionProjection, type DetectionState } from './detection.js';
import { exceptionsProjection, type ExceptionsState } from './exceptions.js';
import { intelProjection, type IntelState } from './intel.js';
import { exportsProjection, type ExportsState } from './exports.js';
import { monitoringProjection, type MonitoringState } from './monitoring.js';
import { retentionProjection, type RetentionState } from './retention.js';
import { typedModels, type FoldedModels, type ReadModels } from './runtime.js';
import { sourcesProjection, type SourcesState } from './sources.js';
import { statsProjection, type Stats } from './stats.js';
import { witnessesProjection, type WitnessesState } from './witnesses.js';
import { keyRotationsProjection, type KeyRotationsState } from './key-rotations.js';
import { ruleQualityProjection, type RuleQualityState } from './rule-quality.js';
import type { Projection } from './types.js';

/** The instance's heap read models, each a typed accessor named for its projection. */
export interface InstanceSlices {
  readonly activity: ActivityState;
  readonly alerts: AlertsState;
  readonly collectors: CollectorsState;
  readonly consoleSessions: ConsoleSessions;
  readonly credentials: CredentialsState;
  readonly detection: DetectionState;
  readonly exceptions: ExceptionsState;
  readonly intel: IntelState;
  readonly exports: ExportsState;
  readonly keyRotations: KeyRotationsState;
  readonly monitoring: MonitoringState;
  readonly retention: RetentionState;
  readonly ruleQuality: RuleQualityState;
  readonly sources: SourcesState;
  readonly stats: Stats;
  readonly witnesses: WitnessesState;
}

const SLICES: { readonly [K in keyof InstanceSlices]: Projection<InstanceSlices[K]> } = {
  activity: activityProjection,
  alerts: alertsProjection,
  collectors: collectorsProjection,
  consoleSessions: consoleSessionsProjection,
  credentials: credentialsProjection,
  detection: detectionProjection,
  exceptions: exceptionsProjection,
  intel: intelProjection,
  exports: exportsProjection,
  keyRotations: keyRotationsProjection,
  monitoring: monitoringProjection,
  retention: retentionProjection,
  ruleQuality: ruleQualityProjection,
  sources: sourcesProjection,
  stats: statsProjection,
  witnesses: witnessesProjection,
};

declare const writeSide: unique symbol;
declare const readSide: unique symbol;

/**
 * What a decision reads: the write side's models as the writer has folded them, staged batches
 * included. Only the write pipeline hands it out (src/commands/pipeline.ts), to a command's `decide`.
 */
export interface WriteModels extends InstanceSlices, ReadModels {
  readonly [writeSide]: true;
}

/**
 * What a read handler reads (`deps.reads`): the same heap models, the read side's databases for
 * events and the audit trail, and the read side's position. A different type from WriteModels, so
 * a handler cannot pass what it reads as what a decision reads, nor the other way round.
 */
export interface Reads extends InstanceSlices, ReadModels {
  readonly [readSide]: true;
}

/** The write side's models of a runtime, for the pipeline's decisions. */
export function writeModelsOf(runtime: FoldedModels): WriteModels {
  return typedModels<WriteModels>(runtime, runtime, SLICES);
}

/** The reads of an instance: heap slices from the writer's runtime, everything else from `access`. */
export function readsOf(runtime: FoldedModels, access: ReadModels): Reads {
  return typedModels<Reads>(access, runtime, SLICES);
}
