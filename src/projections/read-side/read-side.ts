import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { GraphPage, GraphQuery } from '../graph-query.js';
import type { GraphLimits } from '../graph.js';
import type { IndexKey } from '../types.js';
import type { FromReadWorker, ReadWorkerData, ToReadWorker } from './protocol.js';
import { READ_SIDE_DIR } from './read-fold.js';

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

/** Starts the read-side worker; resolves once it has opened its environment. */
export async function startReadSide(opts: ReadSideOptions): Promise<ReadSide> {
  const haltFlag = new Int32Array(new SharedArrayBuffer(4));
  const workerData: ReadWorkerData = {
    storePath: opts.storePath,
    graph: opts.graph,
    halt: haltFlag.buffer as SharedArrayBuffer,
    ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
    ...(opts.nice ? { nice: opts.nice } : {}),
  };
  const worker = new Worker(new URL('./worker.js', import.meta.url), { workerData });
  let applied = 0;
  let nextId = 1;
  let failure: string | undefined;
  let exited = false;
  let envRef: RootDatabase | undefined;
  const replies = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  const waiters = new Set<{ seq: number; resolve: () => void }>();
  let pendingHead = 0;
  let headScheduled = false;
  // The worker keeps the process alive only while someone waits for it.
  let waiting = 0;
  const hold = () => {
    if (waiting++ === 0) worker.ref();
  };
  const release = () => {
    if (--waiting === 0) worker.unref();
  };

  const ready = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: FromReadWorker) => {
      switch (m.kind) {
        case 'ready':
          applied = m.applied;
          resolve();
          return;
        case 'applied':
          applied = m.seq;
          // Reads after this see what the worker committed, not an older snapshot.
          envRef?.resetReadTxn();
          for (const w of waiters)
            if (w.seq <= applied) {
              waiters.delete(w);
              w.resolve();
            }
          return;
        case 'reply': {
          const r = replies.get(m.id);
          replies.delete(m.id);
          r?.resolve(m.value);
          return;
        }
        case 'failed':
          failure = m.message;
          opts.onFailure?.(m.message);
          if (m.id !== undefined) {
            replies.get(m.id)?.reject(new Error(m.message));
            replies.delete(m.id);
          }
          return;
      }
    });
  });
  // A request still waiting when the worker exits gets no answer from it: the exit refuses it.
  const gone = () => new Error("the read side's worker has exited");
  worker.once('exit', () => {
    exited = true;
    for (const r of replies.values()) r.reject(gone());
    replies.clear();
  });
  worker.on('error', (err) => {
    failure = err.message;
    opts.onFailure?.(`read side worker failed: ${err.message}`);
    for (const r of replies.values()) r.reject(err);
    replies.clear();
  });
  await ready;
  worker.unref();

  const env: RootDatabase = open({
    path: join(opts.storePath, READ_SIDE_DIR),
    maxDbs: 32,
    compression: false,
    cache: false,
    noSync: true,
  });
  envRef = env;
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

  /** Posts a request to the worker and resolves with its answer; refused once the worker has exited. */
  const request = <T>(m: ToReadWorker & { id: number }): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (exited) return reject(gone());
      hold();
      replies.set(m.id, {
        resolve: (v) => {
          release();
          resolve(v as T);
        },
        reject: (e) => {
          release();
          reject(e);
        },
      });
      worker.postMessage(m);
    });
  /** A request, refused at once after a failure: the worker's answers can no longer be trusted. */
  const ask = <T>(m: ToReadWorker & { id: number }): Promise<T> =>
    failure ? Promise.reject(new Error(failure)) : request<T>(m);

  return {
    applied: () => applied,
    notify(seq) {
      if (seq <= pendingHead) return;
      pendingHead = seq;
      if (headScheduled) return;
      headScheduled = true;
      // One message per event-loop turn, however many batches committed in it.
      setImmediate(() => {
        headScheduled = false;
        worker.postMessage({ kind: 'head', seq: pendingHead } satisfies ToReadWorker);
      });
    },
    caughtUp(seq, timeoutMs = 10_000) {
      if (applied >= seq) return Promise.resolve();
      if (failure) return Promise.reject(new ReadSideLagging(failure));
      return new Promise<void>((resolve, reject) => {
        hold();
        const w = {
          seq,
          resolve: () => {
            clearTimeout(timer);
            release();
            resolve();
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(w);
          release();
          reject(new ReadSideLagging(`the read side has folded record ${applied} of ${seq}`));
        }, timeoutMs);
        waiters.add(w);
      });
    },
    db<V>(name: string) {
      const db = dbs.get(name);
      if (!db) throw new Error(`no read-side database named ${name}`);
      return db as unknown as Database<V, IndexKey>;
    },
    graph: (query) => ask<GraphPage | null>({ kind: 'graph', id: nextId++, query }).then((p) => p ?? undefined),
    snapshot: (name) => ask<unknown>({ kind: 'snapshot', id: nextId++, name }),
    rebuild: (until) => ask<number>({ kind: 'rebuild', id: nextId++, until }),
    settle: () => ask<null>({ kind: 'settle', id: nextId++ }).then(() => undefined),
    async halt(timeoutMs) {
      Atomics.store(haltFlag, 0, 1);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      // Asked even after a failure (a worker whose fold failed goes on taking turns, and a later one
      // may be inside a transaction); refused, it has exited, and no thread is left inside one.
      const answered = request<null>({ kind: 'halt', id: nextId++ }).then(
        () => true,
        () => true,
      );
      const halted = await Promise.race([answered, late]);
      clearTimeout(timer);
      return halted;
    },
    async close() {
      if (!failure) await ask<null>({ kind: 'close', id: nextId++ }).catch(() => undefined);
      await env.close();
      await worker.terminate();
    },
  };
}
