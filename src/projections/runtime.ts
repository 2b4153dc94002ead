import type { Database } from 'lmdb';
import type { LmdbEventLog } from '../log/lmdb-log.js';
import type { LmdbStore } from '../log/lmdb-store.js';
import type { LogRecord } from '../kernel/record.js';
import { decodeLentForWriteSide } from '../log/evidence-fields.js';
import { eventsOfRecord } from '../events/record-types.js';
import { createHeapModels, type Checkpoint } from './heap-models.js';
import { createIndexWrites, type Op } from './index-writes.js';
import type { IndexKey, IndexProjection, IndexReader, Projection } from './types.js';

/** Records read at a time by a refold from a cut, and the longest it folds before giving the writer a turn. */
const REFOLD_CHUNK = 2000;
/**
 * Events whose index writes a fold commits in one transaction. Their decoded records are held until
 * it runs, and every young-generation collection meanwhile copies them: with chunks of 50,000
 * events `vigil replay` of the benchmark's log of 160,000 took about 0.35 of its 3.7 CPU seconds
 * more than with 5,000 (docs/benchmarks.md); the fsync per chunk costs less than the copies.
 */
const FOLD_CHUNK_EVENTS = 5_000;
const REFOLD_SLICE_MS = 10;
/** The longest a turn fills an index's key filter from its database (src/projections/key-filter.ts). */
const FILTER_SLICE_MS = 10;

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

function* concat<T>(a: Iterable<T>, b: Iterable<T>): Iterable<T> {
  yield* a;
  yield* b;
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
  const { store, log, projections, indexes } = opts;
  const checkpointEvery = opts.checkpointEvery ?? 20_000;
  let heap = createHeapModels(store, projections);
  /** A refold from a cut in progress: checkpoints wait, as the current models still hold what the cut removed. */
  let refolding: Promise<void> | undefined;
  const ix = createIndexWrites(store, indexes);
  const allIndexNames = indexes.map((i) => i.name);
  const pendingOps = new Map<number, Op[]>();
  /** Records applied but not yet durable, readable by deciders through `record(seq)`. */
  const stagedRecords = new Map<number, LogRecord>();
  /** Committed records as the folds read them (`foldable`), each decoded where lmdb-js reads it. */
  const committed = log.openLentReader(decodeLentForWriteSide);
  let seq = 0;
  let sinceCheckpoint = 0;
  let stopped = false;
  let filling = false;

  /**
   * Fills the indexes' key filters from their databases a slice per turn, while there is one to
   * fill (after opening a store, or once a filter is past its capacity): until a filter is full,
   * reads of its database go to LMDB as before.
   */
  function fillFilters(): void {
    if (filling || stopped || !ix.warming()) return;
    filling = true;
    const step = () => {
      if (stopped || ix.warmStep(FILTER_SLICE_MS)) filling = false;
      else setImmediate(step);
    };
    setImmediate(step);
  }

  /**
   * Committed records [from, to] as the folds below read them: an evidence record's events hold
   * only the fields the write side's models fold (`WriteSideEvent`, src/log/evidence-fields.ts).
   */
  function* foldable(from: number, to: number): Iterable<LogRecord> {
    for (const { value } of committed.range(from, to)) yield value;
  }

  /**
   * Folds records [from, to] into the heap models behind them and into the named indexes, the
   * indexes a chunk of records to a transaction (committed records: no decision reads their writes
   * before they commit, so they go straight into the store).
   */
  async function fold(
    from: number,
    to: number,
    indexNames: ReadonlySet<string>,
    onProgress?: (seq: number) => void,
  ): Promise<number> {
    let count = 0;
    let chunk: LogRecord[] = [];
    let chunkEvents = 0;
    let chunkLast = 0;
    // One chunk commits while the next is decoded: a chunk's records stay in memory until its
    // transaction has run, and at most two chunks are (see FOLD_CHUNK_EVENTS).
    let committing: Promise<void> = Promise.resolve();
    const flush = async () => {
      const records = chunk;
      const last = chunkLast;
      chunk = [];
      chunkEvents = 0;
      await committing;
      if (indexNames.size > 0)
        committing = log.commit(() => ix.applyCommitted(records, last, indexNames)).then(() => onProgress?.(last));
      else onProgress?.(last);
    };
    // After a retention cut, a fold from the start folds the records carried forward first.
    const carried = from <= log.first() && opts.carried ? opts.carried.all() : [];
    try {
      for (const record of concat(carried, foldable(from, to))) {
        heap.fold(record);
        if (indexNames.size > 0) {
          chunk.push(record);
          chunkEvents += eventsOfRecord(record).length;
        }
        chunkLast = record.seq;
        count++;
        if (chunkEvents >= FOLD_CHUNK_EVENTS || count % 20_000 === 0) await flush();
      }
      if (chunkLast > 0) await flush();
    } finally {
      await committing;
    }
    return count;
  }

  const runtime: ProjectionRuntime = {
    index: ix.reader,
    state: (name) => heap.state(name),
    db: <V>(name: string) => ix.db(name) as unknown as Database<V, IndexKey>,
    seq: () => seq,
    record: (s) => {
      const staged = stagedRecords.get(s);
      if (staged) return staged;
      for (const r of log.read(s, s)) return r;
      return s < log.first() ? opts.carried?.get(s) : undefined;
    },

    async start() {
      const head = log.head().seq;
      heap.restore(head);
      // Indexes commit with their records, so one that is not exactly at the head (a version bump,
      // or records appended by another tool) is rebuilt rather than trusted.
      const stale = indexes
        .filter((i) => {
          const m = ix.meta(i.name);
          return !m || m.version !== i.version || m.seq !== head;
        })
        .map((i) => i.name);
      if (stale.length > 0) await log.commit(() => ix.clear(stale));
      // A checkpoint from before the last cut still holds what the cut removed: refold from the cut.
      const cutAt = log.cut()?.atSeq;
      if (cutAt !== undefined && heap.lowestSeq() < cutAt) heap.reset();
      const from = Math.min(heap.lowestSeq(), head) + 1;
      const folded = await fold(stale.length > 0 ? 1 : from, head, new Set(stale));
      seq = head;
      fillFilters();
      return folded;
    },

    apply(records, kept = records) {
      const ops: Op[] = [];
      for (const r of kept) stagedRecords.set(r.seq, r);
      for (const r of records) {
        heap.fold(r);
        ix.collect(r, ops);
        seq = r.seq;
      }
      const last = records.at(-1)?.seq;
      if (last !== undefined) pendingOps.set(last, ops);
      fillFilters();
      sinceCheckpoint += records.length;
      if (sinceCheckpoint >= checkpointEvery) {
        sinceCheckpoint = 0;
        void runtime.checkpoint().catch(() => undefined);
      }
      return (recs) => {
        const lastSeq = recs.at(-1)?.seq;
        if (lastSeq === undefined) return;
        const mine = pendingOps.get(lastSeq);
        // The writes are collected right after staging; running before that would lose them.
        if (!mine) throw new Error(`read-model writes for seq ${lastSeq} were not collected`);
        ix.write(mine, lastSeq, allIndexNames);
      };
    },

    settle(records) {
      const last = records.at(-1)?.seq;
      if (last === undefined) return;
      ix.settle(pendingOps.get(last) ?? []);
      pendingOps.delete(last);
      for (const r of records) stagedRecords.delete(r.seq);
    },

    async checkpoint() {
      if (refolding) return;
      const snap = heap.snapshot();
      await log.commit(() => heap.write(snap));
    },

    refold(firstSeq) {
      const fresh = createHeapModels(store, projections);
      const run = (async () => {
        let last = firstSeq - 1;
        // Folded elsewhere when it can be (a failed worker costs only the time: all is folded here).
        const elsewhere = await opts.foldFromCut?.(firstSeq).catch(() => undefined);
        if (elsewhere && fresh.load(elsewhere.checkpoints)) last = elsewhere.seq;
        else for (const r of opts.carried?.all() ?? []) fresh.fold(r);
        for (;;) {
          // Committed records, a slice of REFOLD_SLICE_MS per turn so ingest keeps its turns; the
          // last step folds the staged ones and swaps at once.
          const until = performance.now() + REFOLD_SLICE_MS;
          let n = 0;
          let more = false;
          for (const r of log.read(last + 1, last + REFOLD_CHUNK)) {
            fresh.fold(r);
            last = r.seq;
            if ((more = ++n % 16 === 0 && performance.now() >= until)) break;
          }
          if (more || n === REFOLD_CHUNK) {
            await new Promise((r) => setImmediate(r));
            continue;
          }
          for (const s of [...stagedRecords.keys()].sort((a, b) => a - b)) {
            if (s > last + 1) break; // not readable yet: look again next turn, never fold past a gap
            if (s === last + 1) {
              fresh.fold(stagedRecords.get(s)!);
              last = s;
            }
          }
          if (last >= seq) break;
          await new Promise((r) => setImmediate(r));
        }
        heap = fresh;
      })();
      refolding = run.finally(() => {
        if (refolding === tracked) refolding = undefined;
      });
      const tracked = refolding;
      return refolding;
    },

    stop() {
      stopped = true;
    },

    async rebuild(until, onProgress) {
      heap.reset();
      await log.commit(() => ix.clear(allIndexNames));
      const to = until ?? log.head().seq;
      const n = await fold(1, to, new Set(allIndexNames), onProgress);
      seq = to;
      if (until === undefined) await runtime.checkpoint();
      return n;
    },
  };
  return runtime;
}
