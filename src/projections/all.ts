import { alertsProjection } from './alerts.js';
import { auditIndex } from './audit.js';
import { collectorsProjection } from './collectors.js';
import { detectionProjection } from './detection.js';
import { evidenceIndex } from './evidence.js';
import { graphProjection } from './graph.js';
import { sourcesProjection } from './sources.js';
import { statsProjection } from './stats.js';
import type { IndexProjection, Projection } from './types.js';

/** Every in-memory read model of the instance. */
export const HEAP_PROJECTIONS: readonly Projection<unknown>[] = [
  graphProjection, statsProjection, detectionProjection, alertsProjection, sourcesProjection,
  collectorsProjection,
] as Projection<unknown>[];

/** Every LMDB-backed read model of the instance. */
export const INDEX_PROJECTIONS: readonly IndexProjection[] = [evidenceIndex, auditIndex];
