import { join } from 'node:path';
import type { Database } from 'lmdb';
import type { LogRecord } from '../../kernel/record.js';
import type { IndexProjection, Projection } from '../types.js';
import { bootId, indexAccess, isStale, openEnv, openIndexDbs, type Meta } from './read-env.js';
import { clearModels, current, evolveHeap, metaOf, writeCheckpoints, type FoldState } from './read-fold-state.js';
import { expireStep, startExpiry, sweptDbs } from './read-expiry.js';

/** The read side's own LMDB environment, inside the store folder. */
export const READ_SIDE_DIR = 'read-side';

/** The longest one transaction of the fold reads the log for (then it commits and renews its snapshot). */
const CHUNK_MS = 250;

/** What the read side reads of the log: committed records and the head. */
export interface LogReader {
  read(from: number, to: number): Iterable<LogRecord>;
  head(): { readonly seq: number };
  /** The first stored seq (after a retention cut) and the records carried forward past it, by original seq. */
  first?(): number;
  carried?(): LogRecord[];
  /**
   * Lets go of the log's read snapshot, so the next read starts a fresh one: pages the writer frees
   * are reused only once no snapshot older than their freeing is open, so a long fold must not keep
   * one (the store's file would grow by what is written meanwhile).
   */
  renew?(): void;
}

/**
 * What the read side folds: LMDB index projections and heap projections (the graph). Every index
 * says which record wrote an entry (`recordOf`), so a retention cut is forgotten by a sweep.
 */
export interface ReadProjections {
  readonly indexes: readonly IndexProjection[];
  readonly heap: readonly Projection<unknown>[];
}

/** The read side's fold of the log, run in its worker thread. */
export interface ReadFold {
  /** The last seq folded into every read model. */
  applied(): number;
  /**
   * Folds records (applied, to], in transactions of at most `chunk` records or `CHUNK_MS`; returns
   * how many. Stops between two transactions once `halted` (an option of openReadFold) says so.
   */
  catchUp(to: number): number;
  /** Clears every read model and folds from record 1 to `until` (default: the head). */
  rebuild(until: number): number;
  /** Whether the read models still hold what a retention cut removed (see `expireStep`). */
  expiring(): boolean;
  /**
   * Goes on forgetting what retention cuts removed, for at most `budgetMs`: the index entries of
   * removed records (a sweep), and the heap models folded again from the cut beside the current
   * ones, which they replace once caught up. Reads meanwhile skip entries whose record is gone and
   * see the graph as it was. Returns whether it is done (always, given `Infinity`).
   */
  expireStep(budgetMs: number): boolean;
  state<S>(name: string): S;
  /** Writes the heap projections' checkpoints. */
  checkpoint(): void;
  /** Checkpoints, marks a clean shutdown and closes the environment. */
  close(): Promise<void>;
}

/**
 * Opens the read side of the store at `storePath` over `log`. Its environment is written without
 * fsync (it can always be rebuilt from the log): after an operating-system crash while it was open
 * (another boot id, no clean shutdown) it is rebuilt; after a process crash the OS kept its writes.
 */
export function openReadFold(
  storePath: string,
  log: LogReader,
  projections: ReadProjections,
  opts: { chunk?: number; checkpointEvery?: number; halted?: () => boolean } = {},
): ReadFold {
  const swept = sweptDbs(projections.indexes);
  const env = openEnv(join(storePath, READ_SIDE_DIR));
  const boot = bootId();
  const versions = Object.fromEntries([...projections.indexes, ...projections.heap].map((p) => [p.name, p.version]));
  const meta: Database<Meta, string> = env.openDB({ name: 'read-meta' });
  const previous = meta.get('meta');
  const stale = isStale(previous, versions, boot, log);
  const { dbs, binary } = openIndexDbs(env, projections.indexes);
  const s: FoldState = {
    env,
    log,
    projections,
    meta,
    checkpoints: env.openDB({ name: 'read-checkpoints' }),
    dbs,
    ...indexAccess(dbs, binary),
    swept,
    versions,
    boot,
    chunk: opts.chunk ?? 20_000,
    checkpointEvery: opts.checkpointEvery ?? 50_000,
    halted: opts.halted ?? (() => false),
    states: new Map(),
    packed: new Map(),
    seq: stale ? 0 : previous!.seq,
    origin: 1,
    sinceCheckpoint: 0,
    expiry: undefined,
  };
  restoreModels(s, stale);
  // The first seq the read models were folded from: a cut past it means they still hold what it removed.
  s.origin = s.seq === 0 ? (log.first?.() ?? 1) : (previous?.origin ?? 1);
  meta.putSync('meta', metaOf(s, s.seq, false));
  return {
    applied: () => s.seq,
    catchUp: (to) => fold(s, to),
    rebuild: (until) => rebuildFrom(s, until),
    expiring: () => s.expiry !== undefined,
    expireStep: (budgetMs) => expireStep(s, budgetMs),
    state: <S>(name: string) => current(s).get(name) as S,
    checkpoint: () => writeCheckpoints(s),
    close: () => closeFold(s),
  };
}

/** Takes the heap models' checkpoints at the fold's seq; clears every model when stale or when one has none there. */
function restoreModels(s: FoldState, stale: boolean): void {
  for (const p of s.projections.heap) {
    const cp = stale ? undefined : s.checkpoints.get(p.name);
    if (cp && cp.version === p.version && cp.seq === s.seq) s.packed.set(p.name, cp.state);
  }
  // Stale, or a heap model without a checkpoint at `seq`: everything is folded again from record 1.
  if (stale || s.projections.heap.some((p) => !s.packed.has(p.name))) clearModels(s);
}

/** Folds `record` into every read model: the index databases and the current heap states. */
function applyOne(s: FoldState, record: LogRecord): void {
  for (const ix of s.projections.indexes) ix.apply(record, s.reader, s.writer);
  evolveHeap(s, current(s), record);
}

/** Folds records (seq, to], a transaction per chunk, checkpointing on the way; returns how many. */
function fold(s: FoldState, to: number): number {
  const { log, env } = s;
  let n = 0;
  // Halted (a storage failure's exit): no transaction is begun after the one that has committed.
  while (s.seq < to && !s.halted()) {
    log.renew?.();
    const seq = s.seq;
    // Records a cut removed before this fold read them (it was behind): the records it carried
    // were never applied here, so everything is folded again from the cut.
    if (seq >= s.origin - 1 && seq + 1 < (log.first?.() ?? 1)) return n + rebuildFrom(s, to);
    // A fold from the start of a cut log reads the live records from the cut (after the carried ones).
    const from = Math.max(seq + 1, s.origin);
    const end = Math.min(to, from - 1 + s.chunk);
    const deadline = performance.now() + CHUNK_MS;
    let last = seq;
    env.transactionSync(() => {
      // From the start of a cut log: the records carried forward first, as the originals they are.
      if (seq === 0 && log.carried) {
        for (const record of log.carried()) {
          applyOne(s, record);
          last = record.seq;
          n++;
        }
      }
      for (const record of log.read(from, end)) {
        applyOne(s, record);
        last = record.seq;
        n++;
        if (performance.now() >= deadline) break;
      }
      s.meta.putSync('meta', metaOf(s, last, false));
    });
    if (last === seq) break;
    s.sinceCheckpoint += last - seq;
    s.seq = last;
    if (s.sinceCheckpoint >= s.checkpointEvery) {
      s.sinceCheckpoint = 0;
      writeCheckpoints(s);
    }
  }
  startExpiry(s);
  return n;
}

/** Clears every read model and folds from the log's first record to `until`. */
function rebuildFrom(s: FoldState, until: number): number {
  clearModels(s);
  s.origin = s.log.first?.() ?? 1;
  s.expiry = undefined;
  // Checkpoints follow at their usual cadence (every `checkpointEvery` records) and at close.
  return fold(s, until);
}

/** Checkpoints, marks a clean shutdown and closes the environment. */
async function closeFold(s: FoldState): Promise<void> {
  writeCheckpoints(s);
  s.meta.putSync('meta', metaOf(s, s.seq, true));
  await s.env.flushed;
  await s.env.close();
}
