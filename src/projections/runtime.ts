import type { Database } from 'lmdb';
import type { LmdbEventLog } from '../log/lmdb-log.js';
import type { LmdbStore } from '../log/lmdb-store.js';
import type { LogRecord } from '../kernel/record.js';
import type { Checkpoint } from './heap-models.js';
import type { Op } from './index-writes.js';
import type { IndexKey, IndexProjection, IndexReader, Projection } from './types.js';
import { createFoldEngine, fillFilters, fold, type FoldEngine } from './fold-engine.js';
import { refoldFromCut } from './cut-refold.js';

/** Read access to the log and the index read models, for deciders and queries. */
export interface ReadModels {
  readonly index: IndexReader;
  /** The LMDB database behind an index projection, for range queries (committed data only). */
  db<V = unknown>(name: string): Database<V, IndexKey>;
  /** The last seq applied to the read models. */
  seq(): number;
  /** A committed log record (queries read event bodies from the log). */
  record(seq: number): LogRecord | undefined;
}

/**
 * The fold engine's access to heap models by projection name: only typed accessors call it
 * (src/projections/models.ts, src/setup/models.ts), so no caller looks a model up by a string.
 */
export interface FoldedModels extends ReadModels {
  state<S>(name: string): S;
}

/**
 * Typed accessors over folded models, for any service: `slices` names each heap model by its
 * projection, so no call site looks a model up by a string; everything else comes from `access`.
 */
export function typedModels<T extends ReadModels>(
  access: ReadModels,
  folded: FoldedModels,
  slices: Readonly<Record<string, Projection<unknown>>>,
): T {
  const out = {
    index: access.index,
    db: access.db.bind(access),
    seq: access.seq.bind(access),
    record: access.record.bind(access),
  };
  for (const [key, projection] of Object.entries(slices)) {
    Object.defineProperty(out, key, { enumerable: true, get: () => folded.state(projection.name) });
  }
  return out as T;
}

/** The projections of one service, folded live and checkpointed. */
export interface ProjectionRuntime extends FoldedModels {
  /** Loads checkpoints and folds the log tail; returns how many records were folded. */
  start(): Promise<number>;
  /**
   * Applies newly staged records; returns the writes to run inside their transaction. Until they
   * are durable, `record(seq)` answers them as `kept` (the log's `StagedBatch.kept`).
   */
  apply(records: readonly LogRecord[], kept?: readonly LogRecord[]): (recs: readonly LogRecord[]) => void;
  /** Forgets overlay entries once their transaction is durable. */
  settle(records: readonly LogRecord[]): void;
  /** Writes every heap projection's state with the current seq. */
  checkpoint(): Promise<void>;
  /** Clears every read model and folds the log from record 1 (to `until` when given). */
  rebuild(until?: number, onProgress?: (seq: number) => void): Promise<number>;
  /**
   * Refolds the heap models from a retention cut: the records carried forward first, then the live
   * records from `firstSeq`, into fresh models, in chunks that let the writer go on; once they have
   * caught up with every applied record (staged ones included) they replace the current models in
   * one step, so they equal a replay from the cut. Until then decisions see the models as before
   * the cut, and no checkpoint is written. Resolves once replaced.
   */
  refold(firstSeq: number): Promise<void>;
  /** Stops work the runtime does between commands (filling key filters): the store is closing. */
  stop(): void;
}

/** Options of the runtime. */
export interface RuntimeOptions {
  readonly store: LmdbStore;
  readonly log: LmdbEventLog;
  readonly projections: readonly Projection<unknown>[];
  readonly indexes: readonly IndexProjection[];
  /** Checkpoint heap projections after this many records (default 20,000). */
  readonly checkpointEvery?: number;
  /** Records carried forward by retention, by original seq (a fold from the cut folds them first). */
  readonly carried?: { get(seq: number): LogRecord | undefined; all(): LogRecord[] };
  /**
   * Folds fresh heap models from a cut somewhere else (a worker thread, src/projections/refold.ts):
   * the carried records (as the store's carried index lists them), then the committed records from
   * `firstSeq` to some `seq`, as checkpoints of `projections`. A refold then folds only what follows
   * `seq` here; when it fails, all of it.
   */
  readonly foldFromCut?: (firstSeq: number) => Promise<{ seq: number; checkpoints: Array<[string, Checkpoint]> }>;
}

/**
 * Creates the runtime that keeps the write side's read models in step with the log: the heap
 * models (src/projections/heap-models.ts) and the LMDB indexes whose writes commit with their
 * records (src/projections/index-writes.ts). Records are applied as they are staged, so the next
 * decision sees them; checkpoints are taken every `checkpointEvery` records.
 */
export function createProjectionRuntime(opts: RuntimeOptions): ProjectionRuntime {
  const { log } = opts;
  const e = createFoldEngine(opts);
  const { ix, stagedRecords } = e;
  const runtime: ProjectionRuntime = {
    index: ix.reader,
    state: (name) => e.heap.state(name),
    db: <V>(name: string) => ix.db(name) as unknown as Database<V, IndexKey>,
    seq: () => e.seq,
    record: (s) => {
      const staged = stagedRecords.get(s);
      if (staged) return staged;
      for (const r of log.read(s, s)) return r;
      return s < log.first() ? opts.carried?.get(s) : undefined;
    },
    start: () => startFromCheckpoints(e),
    apply(records, kept = records) {
      const write = applyStaged(e, records, kept);
      e.sinceCheckpoint += records.length;
      if (e.sinceCheckpoint >= e.checkpointEvery) {
        e.sinceCheckpoint = 0;
        void runtime.checkpoint().catch(() => undefined);
      }
      return write;
    },
    settle(records) {
      const last = records.at(-1)?.seq;
      if (last === undefined) return;
      ix.settle(e.pendingOps.get(last) ?? []);
      e.pendingOps.delete(last);
      for (const r of records) stagedRecords.delete(r.seq);
    },
    async checkpoint() {
      if (e.refolding) return;
      const snap = e.heap.snapshot();
      await log.commit(() => e.heap.write(snap));
    },
    refold: (firstSeq) => refoldFromCut(e, firstSeq),
    stop() {
      e.stopped = true;
    },
    async rebuild(until, onProgress) {
      const n = await foldFromStart(e, until, onProgress);
      if (until === undefined) await runtime.checkpoint();
      return n;
    },
  };
  return runtime;
}

/** Loads the checkpoints and folds the log's tail into every model not at its head (`ProjectionRuntime.start`). */
async function startFromCheckpoints(e: FoldEngine): Promise<number> {
  const { log, indexes } = e.opts;
  const head = log.head().seq;
  e.heap.restore(head);
  // Indexes commit with their records, so one that is not exactly at the head (a version bump,
  // or records appended by another tool) is rebuilt rather than trusted.
  const stale = indexes
    .filter((i) => {
      const m = e.ix.meta(i.name);
      return !m || m.version !== i.version || m.seq !== head;
    })
    .map((i) => i.name);
  if (stale.length > 0) await log.commit(() => e.ix.clear(stale));
  // A checkpoint from before the last cut still holds what the cut removed: refold from the cut.
  const cutAt = log.cut()?.atSeq;
  if (cutAt !== undefined && e.heap.lowestSeq() < cutAt) e.heap.reset();
  const from = Math.min(e.heap.lowestSeq(), head) + 1;
  const folded = await fold(e, stale.length > 0 ? 1 : from, head, new Set(stale));
  e.seq = head;
  fillFilters(e);
  return folded;
}

/**
 * Stages `kept` and folds newly staged `records` into the models (`ProjectionRuntime.apply`); returns the writes to
 * run inside their transaction.
 */
function applyStaged(
  e: FoldEngine,
  records: readonly LogRecord[],
  kept: readonly LogRecord[],
): (recs: readonly LogRecord[]) => void {
  const { heap, ix, pendingOps, allIndexNames } = e;
  const ops: Op[] = [];
  for (const r of kept) e.stagedRecords.set(r.seq, r);
  for (const r of records) {
    heap.fold(r);
    ix.collect(r, ops);
    e.seq = r.seq;
  }
  const last = records.at(-1)?.seq;
  if (last !== undefined) pendingOps.set(last, ops);
  fillFilters(e);
  return (recs) => {
    const lastSeq = recs.at(-1)?.seq;
    if (lastSeq === undefined) return;
    const mine = pendingOps.get(lastSeq);
    // The writes are collected right after staging; running before that would lose them.
    if (!mine) throw new Error(`read-model writes for seq ${lastSeq} were not collected`);
    ix.write(mine, lastSeq, allIndexNames);
  };
}

/** Clears every read model and folds the log from record 1 to `until` or the head (`ProjectionRuntime.rebuild`). */
async function foldFromStart(e: FoldEngine, until?: number, onProgress?: (seq: number) => void): Promise<number> {
  const { log } = e.opts;
  e.heap.reset();
  await log.commit(() => e.ix.clear(e.allIndexNames));
  const to = until ?? log.head().seq;
  const n = await fold(e, 1, to, new Set(e.allIndexNames), onProgress);
  e.seq = to;
  return n;
}
