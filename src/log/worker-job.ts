/**
 * One-shot jobs in worker threads that read the store (an archive, a refold from a cut): the
 * parent's side starts one and waits for its one answer; the worker's side opens the store and
 * answers with its result or its error.
 */
import { Worker, parentPort } from 'node:worker_threads';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { LogHead } from './event-log.js';
import { lentReader, type LentDecode, type LentReader } from './lent-range.js';
import { decodeRecord } from './record.js';
import { type LogRecord } from '../kernel/record.js';

/** Starts the worker at `url` with `data` and resolves with what it answers (`answerJob`). */
export function runWorkerJob<T>(url: URL, data: unknown, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(url, { workerData: data });
    worker.once('message', (m: { result: T } | { error: string }) =>
      'error' in m ? reject(new Error(m.error)) : resolve(m.result),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`${what} exited with ${code}`)));
  });
}

/** The store as a worker reads it: its root, the log's records and the log's head. */
export interface WorkerStore {
  readonly root: RootDatabase;
  readonly records: Database<Uint8Array, number>;
  readonly meta: Database<LogHead, string>;
  /** A reader of the log's records decoded where lmdb-js reads them (`LmdbEventLog.openLentReader`). */
  openLentReader<T>(decode: LentDecode<T>): LentReader<T>;
}

/** Opens the store at `path` in a worker thread (the writer's environment, read only here). */
export function openStoreInWorker(path: string): WorkerStore {
  const root = open({ path, maxDbs: 64, compression: false, cache: false });
  return {
    root,
    records: root.openDB<Uint8Array, number>({ name: 'log', encoding: 'binary', keyEncoding: 'uint32', cache: false }),
    meta: root.openDB<LogHead, string>({ name: 'log-meta', cache: false }),
    openLentReader: (decode) => lentReader(root, 'log', decode),
  };
}

/** In a worker started by `runWorkerJob`: answers with `job`'s result, or with its error, then closes `store`. */
export async function answerJob<T>(store: WorkerStore, job: () => T | Promise<T>): Promise<void> {
  try {
    parentPort!.postMessage({ result: await job() });
  } catch (err) {
    parentPort!.postMessage({ error: (err as Error).message });
  } finally {
    await store.root.close();
  }
}

/**
 * Records `from`..`to` of the store, decoded (whole, unless `decode` says otherwise) with their
 * stored bytes; throws when one is missing.
 */
export function* storedRange(
  store: WorkerStore,
  from: number,
  to: number,
  decode: (bytes: Uint8Array) => LogRecord = decodeRecord,
): Iterable<{ record: LogRecord; bytes: Uint8Array }> {
  let expected = from;
  // A slice of records per read snapshot: a snapshot held for the whole range (seconds for a week
  // of records) keeps the writer from reusing the pages it frees meanwhile, and the file grows.
  for (let at = from; at <= to; at += RANGE_SLICE) {
    for (const { key, value } of store.records.getRange({ start: at, end: Math.min(to, at + RANGE_SLICE - 1) + 1 })) {
      if (key !== expected++) throw new Error(`record ${expected - 1} is missing from the live store`);
      yield { record: decode(value), bytes: value };
    }
    store.root.resetReadTxn();
  }
  if (expected !== to + 1) throw new Error(`records ${expected}..${to} are missing from the live store`);
}

/** Records read under one snapshot by `storedRange`. */
const RANGE_SLICE = 1024;
