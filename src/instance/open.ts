import { openEventStore, type EventStore } from '../commands/event-store.js';
import { detectOn, type DetectionSettings } from '../detection/evaluate.js';
import { eventsOf } from '../events/record-types.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS } from '../projections/all.js';

/** Detection defaults: alerts sharing a system within an hour join one incident. */
export const DEFAULT_DETECTION: DetectionSettings = { incidentWindowMs: 60 * 60 * 1000 };

/** An opened instance store: the log, its read models and the single writer. */
export type InstanceStore = EventStore;

/** Options for opening the store. */
export interface OpenOptions {
  /** Detection settings (incident window); defaults apply when absent. */
  readonly detection?: DetectionSettings;
  readonly checkpointEvery?: number;
  /** Called when a write's outcome is unknown (I/O failure): the process must stop. */
  readonly onFatal?: (err: Error) => void;
}

/** Opens the instance store at `path`: every read model, and detections on every batch's evidence. */
export function openInstanceStore(path: string, opts: OpenOptions = {}): Promise<InstanceStore> {
  const settings = opts.detection ?? DEFAULT_DETECTION;
  return openEventStore(path, {
    projections: HEAP_PROJECTIONS,
    indexes: INDEX_PROJECTIONS,
    augment: (models, events, ctx) => detectOn(models, events.flatMap((e) => eventsOf(e.type, e.data)), ctx, settings),
    ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
    ...(opts.onFatal ? { onFatal: opts.onFatal } : {}),
  });
}
