/**
 * The searches' worker thread (searches.ts): it opens the store and the read side's evidence indexes read only, and
 * runs one search at a time, so a scan of a million events never holds the writer's thread or the read side's.
 */
import { join } from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { open, type Database } from 'lmdb';
import { compileHunt, parseHunt } from '../../detection/hunt/index.js';
import { openStoreInWorker } from '../../log/worker-job.js';
import { decodeRecord } from '../../log/record.js';
import { exportLine } from '../../log/export-line.js';
import { EVIDENCE_DBS } from '../../projections/evidence.js';
import { READ_SIDE_DIR } from '../../projections/read-side/read-fold.js';
import { lowerThreadPriority } from '../../projections/read-side/thread-priority.js';
import type { IndexKey } from '../../projections/types.js';
import { runHunt, type HuntAnswer, type HuntJob, type ScanModels } from './scan.js';

/** What the worker is started with. */
export interface SearchWorkerData {
  readonly storePath: string;
  /** Nice steps below the writer (`limits.readSideNice`): the writer and the read side go first when CPU is short. */
  readonly nice: number;
}

/** A search asked of the worker, or the export lines (with their stored bytes) of records a search cited. */
export type ToSearchWorker =
  | { readonly id: number; readonly query: string; readonly job: HuntJob }
  | { readonly id: number; readonly lines: readonly number[]; readonly maxBytes: number };

/** The worker's answer. */
export type FromSearchWorker =
  | { readonly id: number; readonly answer: HuntAnswer }
  | { readonly id: number; readonly lines: (string | null)[] }
  | { readonly id: number; readonly error: string };

const data = workerData as SearchWorkerData;
lowerThreadPriority(data.nice);
const store = openStoreInWorker(data.storePath);
// Opened as the writer's thread opens it (src/projections/read-side/read-side.ts): one environment per process.
const readEnv = open({ path: join(data.storePath, READ_SIDE_DIR), maxDbs: 32, compression: false, cache: false });
const dbs = new Map<string, Database<Uint8Array, IndexKey>>(
  [EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim].map((name) => [
    name,
    readEnv.openDB({ name, encoding: 'binary', cache: false }) as Database<Uint8Array, IndexKey>,
  ]),
);
const models: ScanModels = {
  db<V>(name: string) {
    const db = dbs.get(name);
    if (!db) throw new Error(`the search worker has no database named ${name}`);
    return db as unknown as Database<V, IndexKey>;
  },
  record(seq) {
    const bytes = store.records.get(seq);
    return bytes ? decodeRecord(bytes) : undefined;
  },
  bytes: (seq) => store.records.get(seq),
};

/**
 * `vigil log export --raw` lines of records `seqs` (null for one the store no longer holds), those of the first ones
 * only once their text passes `maxBytes` (at least one line).
 */
function exportLines(seqs: readonly number[], maxBytes: number): (string | null)[] {
  store.root.resetReadTxn();
  const lines: (string | null)[] = [];
  let size = 0;
  for (const seq of seqs) {
    if (lines.length > 0 && size >= maxBytes) break;
    const bytes = store.records.get(seq);
    const line = bytes ? exportLine(decodeRecord(bytes), bytes).trimEnd() : null;
    size += line?.length ?? 0;
    lines.push(line);
  }
  return lines;
}

parentPort!.on('message', (m: ToSearchWorker) => {
  try {
    if ('lines' in m) return parentPort!.postMessage({ id: m.id, lines: exportLines(m.lines, m.maxBytes) });
    const parsed = parseHunt(m.query);
    if (!parsed.ok) throw new Error(parsed.error.message);
    // A fresh snapshot of both stores: everything committed before the search was asked.
    store.root.resetReadTxn();
    readEnv.resetReadTxn();
    parentPort!.postMessage({ id: m.id, answer: runHunt(models, compileHunt(parsed.query), m.job) });
  } catch (err) {
    parentPort!.postMessage({ id: m.id, error: (err as Error).message });
  }
});
parentPort!.postMessage({ id: 0, ready: true });
