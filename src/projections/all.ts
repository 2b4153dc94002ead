import { activityProjection } from './activity.js';
import { alertsProjection } from './alerts.js';
import { auditIndex } from './audit.js';
import { collectorsProjection } from './collectors.js';
import { consoleSessionsProjection } from './console-sessions.js';
import { credentialsProjection } from './credentials.js';
import { detectionProjection } from './detection.js';
import { evidenceIndex, evidenceReadIndex } from './evidence.js';
import { exceptionsProjection } from './exceptions.js';
import { intelProjection } from './intel.js';
import { exportsProjection } from './exports.js';
import { DEFAULT_GRAPH_LIMITS, createGraphProjection, type GraphLimits } from './graph.js';
import { sourcesProjection } from './sources.js';
import { monitoringProjection } from './monitoring.js';
import { statsProjection } from './stats.js';
import { retentionProjection } from './retention.js';
import { witnessesProjection } from './witnesses.js';
import { keyRotationsProjection } from './key-rotations.js';
import { ruleQualityProjection } from './rule-quality.js';
import type { IndexProjection, Projection } from './types.js';

/**
 * The write side's in-memory read models: what decisions need (rules and correlation windows,
 * alerts, collectors) and small summaries (sources, stats). Folded by the writer, in step.
 */
export const HEAP_PROJECTIONS: readonly Projection<unknown>[] = [
  statsProjection,
  detectionProjection,
  alertsProjection,
  exceptionsProjection,
  intelProjection,
  sourcesProjection,
  collectorsProjection,
  exportsProjection,
  activityProjection,
  consoleSessionsProjection,
  monitoringProjection,
  credentialsProjection,
  retentionProjection,
  witnessesProjection,
  keyRotationsProjection,
  ruleQualityProjection,
] as Projection<unknown>[];

/** The write side's LMDB read model: event ids (idempotency), committed with their records. */
export const INDEX_PROJECTIONS: readonly IndexProjection[] = [evidenceIndex];

/**
 * The read side's models, folded behind the writer in a worker thread: events by time and
 * dimension and the audit trail (LMDB), and the graph (heap, bounded by `graph`).
 */
export function readProjections(graph: GraphLimits = DEFAULT_GRAPH_LIMITS): {
  indexes: readonly IndexProjection[];
  heap: readonly Projection<unknown>[];
} {
  return { indexes: [evidenceReadIndex, auditIndex], heap: [createGraphProjection(graph) as Projection<unknown>] };
}
