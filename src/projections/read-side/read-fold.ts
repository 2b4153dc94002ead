import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { LogRecord } from '../../kernel/record.js';
import type { IndexKey, IndexProjection, IndexWriter, Projection } from '../types.js';
import { packState, unpackState } from '../heap-models.js';

/** The read side's own LMDB environment, inside the store folder. */
export const READ_SIDE_DIR = 'read-side';

/** The longest one transaction of the fold reads the log for (then it commits and renews its snapshot). */
const CHUNK_MS = 250;

/** Bumped when the read side's layout changes: the whole read side is then rebuilt from the log. */
const LAYOUT_VERSION = 1;

interface Meta {
  layout: number;
  seq: number;
  versions: Record<string, number>;
  bootId: string;
  clean: boolean;
  origin?: number;
}
interface Checkpoint {
  version: number;
  seq: number;
  state: Uint8Array;
}

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

function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

/** Opens the read environment, or a fresh one when it cannot be opened (it is derived from the log). */
function openEnv(path: string): RootDatabase {
  try {
    return open({ path, maxDbs: 32, compression: false, cache: false, noSync: true });
  } catch {
    rmSync(path, { recursive: true, force: true });
    return open({ path, maxDbs: 32, compression: false, cache: false, noSync: true });
  }
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
  const chunk = opts.chunk ?? 20_000;
  const halted = opts.halted ?? (() => false);
  const unswept = projections.indexes.find((ix) => ix.recordOf === undefined);
  if (unswept) throw new Error(`read-side index ${unswept.name} does not say which record wrote an entry (recordOf)`);
  const checkpointEvery = opts.checkpointEvery ?? 50_000;
  const env = openEnv(join(storePath, READ_SIDE_DIR));
  const boot = bootId();
  const versions = Object.fromEntries([...projections.indexes, ...projections.heap].map((p) => [p.name, p.version]));
  const meta: Database<Meta, string> = env.openDB({ name: 'read-meta' });
  const previous = meta.get('meta');
  const stale =
    !previous ||
    previous.layout !== LAYOUT_VERSION ||
    (!previous.clean && previous.bootId !== boot) ||
    previous.seq > log.head().seq ||
    Object.entries(versions).some(([name, v]) => previous.versions[name] !== v);
  const binary = new Set(projections.indexes.flatMap((ix) => [...(ix.keyOnlyDbs ?? []), ...(ix.binaryDbs ?? [])]));
  const dbs = new Map<string, Database<unknown, IndexKey>>();
  for (const ix of projections.indexes)
    for (const name of ix.dbs)
      dbs.set(
        name,
        env.openDB({ name, encoding: binary.has(name) ? 'binary' : 'msgpack', cache: false }) as Database<
          unknown,
          IndexKey
        >,
      );
  const checkpoints: Database<Checkpoint, string> = env.openDB({ name: 'read-checkpoints' });
  const states = new Map<string, unknown>();
  /**
   * Checkpointed heap states, unpacked on first use: a rebuild right after opening (`vigil replay`)
   * never pays for them, and while they are packed the stored checkpoints are the current states.
   */
  const packed = new Map<string, Uint8Array>();
  let seq = stale ? 0 : previous!.seq;
  for (const p of projections.heap) {
    const cp = stale ? undefined : checkpoints.get(p.name);
    if (cp && cp.version === p.version && cp.seq === seq) packed.set(p.name, cp.state);
  }
  // Stale, or a heap model without a checkpoint at `seq`: everything is folded again from record 1.
  if (stale || projections.heap.some((p) => !packed.has(p.name))) {
    packed.clear();
    env.transactionSync(() => {
      for (const db of dbs.values()) db.clearSync();
      checkpoints.clearSync();
    });
    seq = 0;
    for (const p of projections.heap) states.set(p.name, p.initial());
  }
  // The first seq the read models were folded from: a cut past it means they still hold what it removed.
  let origin = seq === 0 ? (log.first?.() ?? 1) : (previous?.origin ?? 1);
  const metaOf = (at: number, clean: boolean): Meta => ({
    layout: LAYOUT_VERSION,
    seq: at,
    versions,
    bootId: boot,
    clean,
    origin,
  });
  meta.putSync('meta', metaOf(seq, false));
  let sinceCheckpoint = 0;

  const writer: IndexWriter = {
    put(db, key, value) {
      dbs.get(db)!.putSync(key as never, value === null && binary.has(db) ? new Uint8Array(0) : value);
    },
    remove(db, key) {
      dbs.get(db)!.removeSync(key as never);
    },
  };
  const reader = { get: (db: string, key: IndexKey) => dbs.get(db)!.get(key as never) };

  /** The current heap states, unpacked from their checkpoints when still packed. */
  function current(): Map<string, unknown> {
    if (packed.size > 0) {
      for (const p of projections.heap) states.set(p.name, unpackState(p, packed.get(p.name)!));
      packed.clear();
    }
    return states;
  }

  /** Folds `record` into the heap states in `into` (the current ones, or those folded again from a cut). */
  function evolveHeap(into: Map<string, unknown>, record: LogRecord): void {
    for (const p of projections.heap) into.set(p.name, p.evolve(into.get(p.name), record));
  }

  function applyOne(record: LogRecord): void {
    for (const ix of projections.indexes) ix.apply(record, reader, writer);
    evolveHeap(current(), record);
  }

  function fold(to: number): number {
    let n = 0;
    // Halted (a storage failure's exit): no transaction is begun after the one that has committed.
    while (seq < to && !halted()) {
      log.renew?.();
      // Records a cut removed before this fold read them (it was behind): the records it carried
      // were never applied here, so everything is folded again from the cut.
      if (seq >= origin - 1 && seq + 1 < (log.first?.() ?? 1)) return n + rebuildFrom(to);
      // A fold from the start of a cut log reads the live records from the cut (after the carried ones).
      const from = Math.max(seq + 1, origin);
      const end = Math.min(to, from - 1 + chunk);
      const deadline = performance.now() + CHUNK_MS;
      let last = seq;
      env.transactionSync(() => {
        // From the start of a cut log: the records carried forward first, as the originals they are.
        if (seq === 0 && log.carried) {
          for (const record of log.carried()) {
            applyOne(record);
            last = record.seq;
            n++;
          }
        }
        for (const record of log.read(from, end)) {
          applyOne(record);
          last = record.seq;
          n++;
          if (performance.now() >= deadline) break;
        }
        meta.putSync('meta', metaOf(last, false));
      });
      if (last === seq) break;
      sinceCheckpoint += last - seq;
      seq = last;
      if (sinceCheckpoint >= checkpointEvery) {
        sinceCheckpoint = 0;
        writeCheckpoints();
      }
    }
    // A cut past the first seq the models were folded from: they forget what it removed, a step at a time.
    const first = log.first?.() ?? 1;
    if (expiry === undefined && first > origin) {
      expiry = {
        first,
        carried: new Set((log.carried?.() ?? []).map((r) => r.seq)),
        sweep: 0,
        from: undefined,
        fresh: undefined,
        freshSeq: 0,
      };
    }
    return n;
  }

  /**
   * What a cut's expiry has done so far: the sweep's place, and the heap models folded again beside the current ones.
   */
  interface Expiry {
    readonly first: number;
    readonly carried: ReadonlySet<number>;
    sweep: number;
    from: IndexKey | undefined;
    fresh: Map<string, unknown> | undefined;
    freshSeq: number;
  }
  let expiry: Expiry | undefined;
  const swept = projections.indexes.flatMap((ix) => ix.dbs.map((name) => ({ name, recordOf: ix.recordOf! })));

  function expireStep(budgetMs: number): boolean {
    const x = expiry;
    if (x === undefined) return true;
    const deadline = performance.now() + budgetMs;
    // 1. The sweep: entries of records before the cut that it did not carry forward go.
    while (x.sweep < swept.length) {
      const { name, recordOf } = swept[x.sweep]!;
      const db = dbs.get(name)!;
      const gone: IndexKey[] = [];
      let stoppedAt: IndexKey | undefined;
      let k = 0;
      for (const { key, value } of db.getRange(x.from === undefined ? {} : { start: x.from })) {
        if (++k % 256 === 0 && performance.now() >= deadline) {
          stoppedAt = key;
          break;
        }
        const s = recordOf(name, key, value);
        if (s < x.first && !x.carried.has(s)) gone.push(key);
      }
      if (gone.length > 0)
        env.transactionSync(() => {
          for (const key of gone) db.removeSync(key as never);
        });
      if (stoppedAt !== undefined) {
        x.from = stoppedAt;
        return false;
      }
      x.sweep++;
      x.from = undefined;
    }
    // 2. The heap models, folded again from the cut beside the current ones; swapped in once caught up.
    if (x.fresh === undefined) {
      x.fresh = new Map(projections.heap.map((p) => [p.name, p.initial()]));
      for (const r of log.carried?.() ?? []) evolveHeap(x.fresh, r);
      x.freshSeq = x.first - 1;
    }
    while (x.freshSeq < seq) {
      log.renew?.();
      for (const r of log.read(x.freshSeq + 1, seq)) {
        evolveHeap(x.fresh, r);
        x.freshSeq = r.seq;
        if (performance.now() >= deadline) break;
      }
      if (x.freshSeq < seq && performance.now() >= deadline) return false;
      // Records a later cut removed under the refold: the next expiry folds from that cut.
      if (x.freshSeq < seq) x.freshSeq = seq;
    }
    packed.clear();
    for (const [name, state] of x.fresh) states.set(name, state);
    origin = x.first;
    expiry = undefined;
    writeCheckpoints();
    meta.putSync('meta', metaOf(seq, false));
    return true;
  }

  function writeCheckpoints(): void {
    if (packed.size > 0) return; // nothing folded since they were read
    env.transactionSync(() => {
      for (const p of projections.heap) {
        const s = states.get(p.name);
        checkpoints.putSync(p.name, { version: p.version, seq, state: packState(p, s) });
      }
    });
  }

  function rebuildFrom(until: number): number {
    env.transactionSync(() => {
      for (const db of dbs.values()) db.clearSync();
      checkpoints.clearSync();
    });
    packed.clear();
    for (const p of projections.heap) states.set(p.name, p.initial());
    seq = 0;
    origin = log.first?.() ?? 1;
    expiry = undefined;
    // Checkpoints follow at their usual cadence (every `checkpointEvery` records) and at close.
    return fold(until);
  }

  return {
    applied: () => seq,
    catchUp: (to) => fold(to),
    rebuild: rebuildFrom,
    expiring: () => expiry !== undefined,
    expireStep,
    state: <S>(name: string) => current().get(name) as S,
    checkpoint: writeCheckpoints,
    async close() {
      writeCheckpoints();
      meta.putSync('meta', metaOf(seq, true));
      await env.flushed;
      await env.close();
    },
  };
}
