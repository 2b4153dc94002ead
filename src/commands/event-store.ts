import { openLmdbLog, type LmdbEventLog } from '../log/lmdb-log.js';
import { openLmdbStore, type LmdbStore } from '../log/lmdb-store.js';
import type { IndexProjection, Projection } from '../projections/types.js';
import { createProjectionRuntime, type ProjectionRuntime, type RuntimeOptions } from '../projections/runtime.js';
import { createWriter, type Writer } from './writer.js';
import { openCarriedIndex, type CarriedIndex } from '../log/retention/carried.js';

/** An opened store: the log, its read models and the single writer. */
export interface EventStore<M = unknown> {
  readonly store: LmdbStore;
  readonly log: LmdbEventLog;
  readonly runtime: ProjectionRuntime;
  readonly writer: Writer<M>;
  /** Records carried forward by retention, by original seq. */
  readonly carried: CarriedIndex;
  /** Records folded at start (the tail after the last checkpoint). */
  readonly folded: number;
  /** Checkpoints the read models and closes the store. */
  close(): Promise<void>;
}

/** What a service keeps in its store. */
export interface EventStoreOptions<M> {
  /** The typed accessors decisions read the runtime's models through. */
  readonly models: (runtime: ProjectionRuntime) => M;
  readonly projections: readonly Projection<unknown>[];
  readonly indexes: readonly IndexProjection[];
  readonly checkpointEvery?: number;
  /** Called when a write's outcome is unknown (I/O failure): the process must stop. */
  readonly onFatal?: (err: Error) => void;
  /**
   * Opens the log in the store; the LMDB log by default (a JetStream node passes its own, src/log/jetstream-log.ts).
   */
  readonly openLog?: LogOpener;
  /** Folds the heap models from a retention cut off the writer's thread (src/projections/refold.ts). */
  readonly foldFromCut?: RuntimeOptions['foldFromCut'];
}

/** Opens the log kept in (or copied into) an LMDB store. */
export type LogOpener = (store: LmdbStore, onFatal?: (err: Error) => void) => LmdbEventLog | Promise<LmdbEventLog>;

/**
 * Opens the store at `path` (one process per store), loads checkpoints and folds the tail of the
 * log: the same machinery for the instance and the setup authority, each with its own store.
 */
export async function openEventStore<M>(path: string, opts: EventStoreOptions<M>): Promise<EventStore<M>> {
  const store = openLmdbStore(path);
  try {
    const log = await (opts.openLog ?? openLmdbLog)(store, opts.onFatal);
    const carried = openCarriedIndex(store.root, (seq) => {
      for (const r of log.read(seq, seq)) return r;
      return undefined;
    });
    const runtime = createProjectionRuntime({
      store,
      log,
      projections: opts.projections,
      indexes: opts.indexes,
      carried,
      ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
      ...(opts.foldFromCut ? { foldFromCut: opts.foldFromCut } : {}),
    });
    const folded = await runtime.start();
    const writer = createWriter(log, runtime, opts.models(runtime));
    let closed = false;
    return {
      store,
      log,
      runtime,
      writer,
      folded,
      carried,
      async close() {
        if (closed) return;
        closed = true;
        runtime.stop();
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
