import { createWriter, type Writer } from '../commands/writer.js';
import { detectOn, type DetectionSettings } from '../detection/evaluate.js';
import { eventsOf } from '../events/record-types.js';
import { openLmdbLog, type LmdbEventLog } from '../log/lmdb-log.js';
import { openLmdbStore, type LmdbStore } from '../log/lmdb-store.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS } from '../projections/all.js';
import { createProjectionRuntime, type ProjectionRuntime } from '../projections/runtime.js';

/** Detection defaults: alerts sharing a system within an hour join one incident. */
export const DEFAULT_DETECTION: DetectionSettings = { incidentWindowMs: 60 * 60 * 1000 };

/** An opened instance store: the log, its read models and the single writer. */
export interface InstanceStore {
  readonly store: LmdbStore;
  readonly log: LmdbEventLog;
  readonly runtime: ProjectionRuntime;
  readonly writer: Writer;
  /** Records folded at start (the tail after the last checkpoint). */
  readonly folded: number;
  /** Checkpoints the read models and closes the store. */
  close(): Promise<void>;
}

/** Options for opening the store. */
export interface OpenOptions {
  /** Detection settings (incident window); defaults apply when absent. */
  readonly detection?: DetectionSettings;
  readonly checkpointEvery?: number;
  /** Called when a write's outcome is unknown (I/O failure): the process must stop. */
  readonly onFatal?: (err: Error) => void;
}

/** Opens the store at `path`, loads checkpoints and folds the tail of the log. */
export async function openInstanceStore(path: string, opts: OpenOptions = {}): Promise<InstanceStore> {
  const store = openLmdbStore(path);
  try {
    const log = openLmdbLog(store, opts.onFatal);
    const runtime = createProjectionRuntime({
      store, log, projections: HEAP_PROJECTIONS, indexes: INDEX_PROJECTIONS,
      ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
    });
    const folded = await runtime.start();
    const settings = opts.detection ?? DEFAULT_DETECTION;
    const writer = createWriter(log, runtime, (models, events, ctx) => detectOn(models, events.flatMap((e) => eventsOf(e.type, e.data)), ctx, settings));
    let closed = false;
    return {
      store, log, runtime, writer, folded,
      async close() {
        if (closed) return;
        closed = true;
        await log.close();
        await runtime.checkpoint().catch(() => undefined);
        await store.close();
      },
    };
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
}
