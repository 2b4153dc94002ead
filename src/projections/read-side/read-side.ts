import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { GraphPage, GraphQuery } from '../graph-query.js';
import type { GraphLimits } from '../graph.js';
import type { IndexKey } from '../types.js';
import type { ReadWorkerData, ToReadWorker } from './protocol.js';
import { READ_SIDE_DIR } from './read-fold.js';
import { ask, hold, linkTo, listen, release, request, type WorkerLink } from './worker-link.js';

/** A read did not see the log head it waited for in time (the read side is far behind). */
export class ReadSideLagging extends Error {
  override readonly name = 'ReadSideLagging';
}

/**
 * The read side as the writer's thread sees it: the worker that folds the read models behind the
 * writer, the LMDB databases it writes (readable here, synchronously), graph queries, and the
 * consistency promise: `caughtUp(seq)` resolves once every read model has folded record `seq`.
 */
export interface ReadSide {
  /** The last seq folded into every read-side model. */
  applied(): number;
  /** Tells the worker the log head advanced (after a durable commit). */
  notify(seq: number): void;
  /** Resolves once the read side has folded `seq`; rejects with ReadSideLagging after `timeoutMs`. */
  caughtUp(seq: number, timeoutMs?: number): Promise<void>;
  /** A read-side LMDB database (events by time and dimension, the audit trail). */
  db<V = unknown>(name: string): Database<V, IndexKey>;
  graph(query: GraphQuery): Promise<GraphPage | undefined>;
  /** A heap model's checkpoint form (for tests and `vigil replay`). */
  snapshot(name: string): Promise<unknown>;
  /** Clears the read side and folds the log from record 1 to `until`. */
  rebuild(until: number): Promise<number>;
  /**
   * Resolves once the read models have forgotten everything retention cuts removed (for tests; the worker does it a
   * slice per turn).
   */
  settle(): Promise<void>;
  /**
   * Stops the worker's folding, for a process about to exit without closing (a storage failure).
   * Ended inside an LMDB write transaction, the thread's exit deadlocks in lmdb-js's clean-up (the
   * transaction's lock is never let go), and the process never exits. The fold reads a shared flag
   * between two transactions (each at most 250 ms of reading), and the worker answers the halt at
   * the end of its turn: then nothing more is written. Resolves true once it has answered (or has
   * exited), false when `timeoutMs` passed first.
   */
  halt(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Options of the read side. */
export interface ReadSideOptions {
  readonly storePath: string;
  readonly graph: GraphLimits;
  readonly dbs: readonly string[];
  readonly binaryDbs: readonly string[];
  readonly checkpointEvery?: number;
  /**
   * How much lower than the writer the worker's thread is scheduled (a nice value, 0–19; on Linux,
   * where it is per thread). When the CPU is short the writer, which acknowledges evidence and
   * answers /health, goes first, and the read side catches up when it has room.
   */
  readonly nice?: number;
  /** Called when the worker fails: reads can no longer be trusted to catch up. */
  readonly onFailure?: (message: string) => void;
}

/** Starts the worker thread that folds the read models, telling it where the store is and the flag that halts it. */
function startWorker(opts: ReadSideOptions, haltFlag: Int32Array): Worker {
  const workerData: ReadWorkerData = {
    storePath: opts.storePath,
    graph: opts.graph,
    halt: haltFlag.buffer as SharedArrayBuffer,
    ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
    ...(opts.nice ? { nice: opts.nice } : {}),
  };
  return new Worker(new URL('./worker.js', import.meta.url), { workerData });
}

/** Opens the read side's environment, which the worker writes, and its databases, for reading on this thread. */
function openReadDbs(opts: ReadSideOptions): { env: RootDatabase; dbs: Map<string, Database<unknown, IndexKey>> } {
  const env: RootDatabase = open({
    path: join(opts.storePath, READ_SIDE_DIR),
    maxDbs: 32,
    compression: false,
    cache: false,
    noSync: true,
  });
  const binary = new Set(opts.binaryDbs);
  const dbs = new Map(
    opts.dbs.map((name) => [
      name,
      env.openDB({ name, encoding: binary.has(name) ? 'binary' : 'msgpack', cache: false }) as Database<
        unknown,
        IndexKey
      >,
    ]),
  );
  return { env, dbs };
}

/** Tells the worker the log head advanced to `seq`, at most once per event-loop turn. */
function notifyHead(link: WorkerLink, seq: number): void {
  if (seq <= link.pendingHead) return;
  link.pendingHead = seq;
  if (link.headScheduled) return;
  link.headScheduled = true;
  // One message per event-loop turn, however many batches committed in it.
  setImmediate(() => {
    link.headScheduled = false;
    link.worker.postMessage({ kind: 'head', seq: link.pendingHead } satisfies ToReadWorker);
  });
}

/** Resolves once the worker has folded `seq`; rejects with ReadSideLagging after `timeoutMs` or after a failure. */
function whenCaughtUp(link: WorkerLink, seq: number, timeoutMs: number): Promise<void> {
  if (link.applied >= seq) return Promise.resolve();
  if (link.failure) return Promise.reject(new ReadSideLagging(link.failure));
  return new Promise<void>((resolve, reject) => {
    hold(link);
    const w = {
      seq,
      resolve: () => {
        clearTimeout(timer);
        release(link);
        resolve();
      },
    };
    const timer = setTimeout(() => {
      link.waiters.delete(w);
      release(link);
      reject(new ReadSideLagging(`the read side has folded record ${link.applied} of ${seq}`));
    }, timeoutMs);
    link.waiters.add(w);
  });
}

/** Raises the halt flag and asks the worker to answer it; true once it has (or has exited), false after `timeoutMs`. */
async function haltWorker(link: WorkerLink, haltFlag: Int32Array, timeoutMs: number): Promise<boolean> {
  Atomics.store(haltFlag, 0, 1);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  // Asked even after a failure (a worker whose fold failed goes on taking turns, and a later one
  // may be inside a transaction); refused, it has exited, and no thread is left inside one.
  const answered = request<null>(link, { kind: 'halt', id: link.nextId++ }).then(
    () => true,
    () => true,
  );
  const halted = await Promise.race([answered, late]);
  clearTimeout(timer);
  return halted;
}

/** Closes the read side: asks the worker to close (unless it failed), then closes the environment and ends it. */
async function closeReadSide(link: WorkerLink, env: RootDatabase): Promise<void> {
  if (!link.failure) await ask<null>(link, { kind: 'close', id: link.nextId++ }).catch(() => undefined);
  await env.close();
  await link.worker.terminate();
}

/** Starts the read-side worker; resolves once it has opened its environment. */
export async function startReadSide(opts: ReadSideOptions): Promise<ReadSide> {
  const haltFlag = new Int32Array(new SharedArrayBuffer(4));
  const link = linkTo(startWorker(opts, haltFlag), opts.onFailure);
  await listen(link);
  link.worker.unref();
  const { env, dbs } = openReadDbs(opts);
  link.env = env;
  return {
    applied: () => link.applied,
    notify: (seq) => notifyHead(link, seq),
    caughtUp: (seq, timeoutMs = 10_000) => whenCaughtUp(link, seq, timeoutMs),
    db<V>(name: string) {
      const db = dbs.get(name);
      if (!db) throw new Error(`no read-side database named ${name}`);
      return db as unknown as Database<V, IndexKey>;
    },
    graph: (query) =>
      ask<GraphPage | null>(link, { kind: 'graph', id: link.nextId++, query }).then((p) => p ?? undefined),
    snapshot: (name) => ask<unknown>(link, { kind: 'snapshot', id: link.nextId++, name }),
    rebuild: (until) => ask<number>(link, { kind: 'rebuild', id: link.nextId++, until }),
    settle: () => ask<null>(link, { kind: 'settle', id: link.nextId++ }).then(() => undefined),
    halt: (timeoutMs) => haltWorker(link, haltFlag, timeoutMs),
    close: () => closeReadSide(link, env),
  };
}
