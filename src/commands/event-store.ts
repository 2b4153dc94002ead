import { openLmdbLog, type LmdbEventLog, type LmdbLogOptions } from '../log/lmdb-log.js';
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
  /**
   * Signs the head of every commit (src/log/head-signer.ts). With it, a store holding records past its
   * last signed head is refused before anything folds them, and so is one the signer will not take up.
   */
  readonly signer?: LmdbLogOptions['signer'];
}

/** A store with records past its last signed head: not written by a signing Vigil (docs/log.md, "Signed heads"). */
export class UnattestedTailError extends Error {
  override readonly name = 'UnattestedTailError';
  constructor(
    readonly path: string,
    readonly tail: { readonly from: number; readonly to: number },
  ) {
    super(
      `refusing to start: records ${tail.from} to ${tail.to} of the log in ${path} are past its last signed head ` +
        `(no signing Vigil wrote them): run vigil log verify, then vigil log quarantine-tail to set them aside`,
    );
  }
}

/** Opens the log kept in (or copied into) an LMDB store. */
export type LogOpener = (
  store: LmdbStore,
  onFatal?: (err: Error) => void,
  opts?: LmdbLogOptions,
) => LmdbEventLog | Promise<LmdbEventLog>;

/**
 * Opens the store at `path` (one process per store), loads checkpoints and folds the tail of the
 * log: the same machinery for the instance and the setup authority, each with its own store.
 */
export async function openEventStore<M>(path: string, opts: EventStoreOptions<M>): Promise<EventStore<M>> {
  const store = openLmdbStore(path);
  try {
    const log = await (opts.openLog ?? openLmdbLog)(store, opts.onFatal, opts.signer ? { signer: opts.signer } : {});
    if (opts.signer) {
      const lost = log.missingTail();
      if (lost)
        throw new Error(
          `refusing to start: records ${lost.from} to ${lost.to} of the log are missing from the store ${path} ` +
            `(its tail was cut or lost); run vigil log verify, and restore the store from a backup`,
        );
      const tail = log.unattestedTail();
      if (tail) throw new UnattestedTailError(path, tail);
      await log.signing;
    }
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
    await opts.signer?.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw err;
  }
}
