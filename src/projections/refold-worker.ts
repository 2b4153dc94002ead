/**
 * Folds the write side's heap models from a retention cut in a worker thread (src/projections/
 * refold.ts): the records carried forward, then the live records from the cut's first seq to the
 * committed head, read from the store itself (read only here). The writer's thread restores the
 * result and folds only what was committed or staged since, so a cut costs ingest a restore, not
 * a fold of the whole live store. Posts `{seq, checkpoints}` or `{error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { open } from 'lmdb';
import { Packr } from 'msgpackr';
import type { LogHead } from '../log/event-log.js';
import { decodeRecord, type LogRecord } from '../log/record.js';
import { HEAP_PROJECTIONS } from './all.js';
import type { RefoldJob, RefoldResult } from './refold.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const job = workerData as RefoldJob;
const root = open({ path: job.storePath, maxDbs: 64, compression: false, cache: false });

function foldFromCut(): RefoldResult {
  const records = root.openDB<Uint8Array, number>({ name: 'log', encoding: 'binary', keyEncoding: 'uint32', cache: false });
  const meta = root.openDB<LogHead, string>({ name: 'log-meta', cache: false });
  const head = meta.get('head')?.seq ?? 0;
  const states = HEAP_PROJECTIONS.map((p) => p.initial());
  const fold = (r: LogRecord) => { for (let i = 0; i < states.length; i++) states[i] = HEAP_PROJECTIONS[i]!.evolve(states[i], r); };
  for (const r of job.carried) fold(r);
  let expected = job.firstSeq;
  for (const { key, value } of records.getRange({ start: job.firstSeq, end: head + 1 })) {
    if (key !== expected++) throw new Error(`record ${expected - 1} is missing from the live store`);
    fold(decodeRecord(value));
  }
  const seq = expected - 1;
  return {
    seq,
    checkpoints: HEAP_PROJECTIONS.map((p, i) => [p.name, { version: p.version, seq, state: packr.pack(p.snapshot ? p.snapshot(states[i]) : states[i]) }]),
  };
}

try {
  parentPort!.postMessage(foldFromCut());
} catch (err) {
  parentPort!.postMessage({ error: (err as Error).message });
} finally {
  void root.close();
}
