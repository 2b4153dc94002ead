import { openEventStore, type EventStore } from '../commands/event-store.js';
import { detectOn, type DetectionSettings } from '../detection/evaluate.js';
import { eventsOf } from '../events/record-types.js';
import { INDEX_PROJECTIONS, heapProjections } from '../projections/all.js';
import type { GraphLimits } from '../projections/graph.js';
import type { Config } from '../config/schema.js';

/** Detection defaults: alerts sharing a system within an hour join one incident. */
export const DEFAULT_DETECTION: DetectionSettings = { incidentWindowMs: 60 * 60 * 1000 };

/** An opened instance store: the log, its read models and the single writer. */
export type InstanceStore = EventStore;

/** Options for opening the store. */
export interface OpenOptions {
  /** Detection settings (incident window); defaults apply when absent. */
  readonly detection?: DetectionSettings;
  readonly checkpointEvery?: number;
  /** How much of the graph is kept in memory; defaults apply when absent. */
  readonly graph?: GraphLimits;
  /** Called when a write's outcome is unknown (I/O failure): the process must stop. */
  readonly onFatal?: (err: Error) => void;
}

/** The store options a configuration asks for (detection settings, graph limits). */
export function storeOptions(config: Config): OpenOptions {
  return {
    detection: { incidentWindowMs: config.detection.incidentWindowMinutes * 60_000 },
    graph: { entities: config.limits.graphEntities, relationships: config.limits.graphRelationships },
  };
}

/** Opens the instance store at `path`: every read model, and detections on every batch's evidence. */
export function openInstanceStore(path: string, opts: OpenOptions = {}): Promise<InstanceStore> {
  const settings = opts.detection ?? DEFAULT_DETECTION;
  return openEventStore(path, {
    projections: heapProjections(opts.graph),
    indexes: INDEX_PROJECTIONS,
    augment: (models, events, ctx) => detectOn(models, events.flatMap((e) => eventsOf(e.type, e.data)), ctx, settings),
    ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
    ...(opts.onFatal ? { onFatal: opts.onFatal } : {}),
  });
}
