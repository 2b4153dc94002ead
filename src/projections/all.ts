import { alertsProjection } from './alerts.js';
import { auditIndex } from './audit.js';
import { collectorsProjection } from './collectors.js';
import { detectionProjection } from './detection.js';
import { evidenceIndex } from './evidence.js';
import { DEFAULT_GRAPH_LIMITS, createGraphProjection, type GraphLimits } from './graph.js';
import { sourcesProjection } from './sources.js';
import { statsProjection } from './stats.js';
import type { IndexProjection, Projection } from './types.js';

/** Every in-memory read model of the instance, the graph bounded by `graph`. */
export function heapProjections(graph: GraphLimits = DEFAULT_GRAPH_LIMITS): readonly Projection<unknown>[] {
  return [
    createGraphProjection(graph), statsProjection, detectionProjection, alertsProjection, sourcesProjection,
    collectorsProjection,
  ] as Projection<unknown>[];
}

/** Every in-memory read model of the instance, with the default limits. */
export const HEAP_PROJECTIONS: readonly Projection<unknown>[] = heapProjections();

/** Every LMDB-backed read model of the instance. */
export const INDEX_PROJECTIONS: readonly IndexProjection[] = [evidenceIndex, auditIndex];
