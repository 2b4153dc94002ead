import type { LogRecord } from '../kernel/record.js';
import { decodeLentForWriteSide } from '../log/evidence-fields.js';
import type { LentReader } from '../log/lent-range.js';
import { eventsOfRecord } from '../events/record-types.js';
import { createHeapModels, type HeapModels } from './heap-models.js';
import { createIndexWrites, type IndexWrites, type Op } from './index-writes.js';
import type { RuntimeOptions } from './runtime.js';

/**
 * Events whose index writes a fold commits in one transaction. Their decoded records are held until
 * it runs, and every young-generation collection meanwhile copies them: with chunks of 50,000
 * events `vigil replay` of the benchmark's log of 160,000 took about 0.35 of its 3.7 CPU seconds
 * more than with 5,000 (docs/benchmarks.md); the fsync per chunk costs less than the copies.
 */
const FOLD_CHUNK_EVENTS = 5_000;
/** The longest a turn fills an index's key filter from its database (src/projections/key-filter.ts). */
const FILTER_SLICE_MS = 10;

/**
 * The state the jobs of the fold engine (src/projections/runtime.ts) share: the models, the writes and records
 * applied but not yet durable, and how far the folds are.
 */
export interface FoldEngine {
  readonly opts: RuntimeOptions;
  readonly checkpointEvery: number;
  heap: HeapModels;
  /** A refold from a cut in progress: checkpoints wait, as the current models still hold what the cut removed. */
  refolding: Promise<void> | undefined;
  readonly ix: IndexWrites;
  readonly allIndexNames: readonly string[];
  readonly pendingOps: Map<number, Op[]>;
  /** Records applied but not yet durable, readable by deciders through `record(seq)`. */
  readonly stagedRecords: Map<number, LogRecord>;
  /** Committed records as the folds read them (`foldable`), each decoded where lmdb-js reads it. */
  readonly committed: LentReader<LogRecord>;
  seq: number;
  sinceCheckpoint: number;
  stopped: boolean;
  filling: boolean;
}

/** The fold engine of `opts` before it folds anything: fresh heap models, the indexes opened, nothing staged. */
export function createFoldEngine(opts: RuntimeOptions): FoldEngine {
  const { store, log, projections, indexes } = opts;
  return {
    opts,
    checkpointEvery: opts.checkpointEvery ?? 20_000,
    heap: createHeapModels(store, projections),
    refolding: undefined,
    ix: createIndexWrites(store, indexes),
    allIndexNames: indexes.map((i) => i.name),
    pendingOps: new Map<number, Op[]>(),
    stagedRecords: new Map<number, LogRecord>(),
    committed: log.openLentReader(decodeLentForWriteSide),
    seq: 0,
    sinceCheckpoint: 0,
    stopped: false,
    filling: false,
  };
}

/**
 * Fills the indexes' key filters from their databases a slice per turn, while there is one to
 * fill (after opening a store, or once a filter is past its capacity): until a filter is full,
 * reads of its database go to LMDB as before.
 */
export function fillFilters(e: FoldEngine): void {
  if (e.filling || e.stopped || !e.ix.warming()) return;
  e.filling = true;
  const step = () => {
    if (e.stopped || e.ix.warmStep(FILTER_SLICE_MS)) e.filling = false;
    else setImmediate(step);
  };
  setImmediate(step);
}

/** The items of `a`, then those of `b`. */
function* concat<T>(a: Iterable<T>, b: Iterable<T>): Iterable<T> {
  yield* a;
  yield* b;
}

/**
 * Committed records [from, to] as the folds below read them: an evidence record's events hold
 * only the fields the write side's models fold (`WriteSideEvent`, src/log/evidence-fields.ts).
 */
function* foldable(committed: LentReader<LogRecord>, from: number, to: number): Iterable<LogRecord> {
  for (const { value } of committed.range(from, to)) yield value;
}

/**
 * Folds records [from, to] into the heap models behind them and into the named indexes, the
 * indexes a chunk of records to a transaction (committed records: no decision reads their writes
 * before they commit, so they go straight into the store).
 */
export async function fold(
  e: FoldEngine,
  from: number,
  to: number,
  indexNames: ReadonlySet<string>,
  onProgress?: (seq: number) => void,
): Promise<number> {
  const { log } = e.opts;
  const { ix } = e;
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
  const carried = from <= log.first() && e.opts.carried ? e.opts.carried.all() : [];
  try {
    for (const record of concat(carried, foldable(e.committed, from, to))) {
      e.heap.fold(record);
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
