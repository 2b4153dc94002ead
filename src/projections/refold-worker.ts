/**
 * Folds the write side's heap models from a retention cut in a worker thread (src/projections/
 * refold.ts): the records carried forward (read from the store's carried index, so the writer's
 * thread never lists them: a year of access records is millions), then the live records from the
 * cut's first seq to the committed head, read from the store itself (read only here). The writer's thread restores the
 * result and folds only what was committed or staged since, so a cut costs ingest a restore, not
 * a fold of the whole live store. Answers with the models as checkpoints at the head it read.
 */
import { workerData } from 'node:worker_threads';
import { decodeRecord } from '../log/record.js';
import { type LogRecord } from '../kernel/record.js';
import { decodeForWriteSide } from '../log/evidence-fields.js';
import { answerJob, openStoreInWorker, storedRange } from '../log/worker-job.js';
import { HEAP_PROJECTIONS } from './all.js';
import { packState } from './heap-models.js';
import { openCarriedIndex } from '../log/retention/carried.js';
import type { RefoldJob, RefoldResult } from './refold.js';

const job = workerData as RefoldJob;
const store = openStoreInWorker(job.storePath);

void answerJob(store, (): RefoldResult => {
  const seq = store.meta.get('head')?.seq ?? 0;
  const states = HEAP_PROJECTIONS.map((p) => p.initial());
  const fold = (r: LogRecord) => {
    for (let i = 0; i < states.length; i++) states[i] = HEAP_PROJECTIONS[i]!.evolve(states[i], r);
  };
  const record = (s: number): LogRecord | undefined => {
    const bytes = store.records.get(s);
    return bytes ? decodeRecord(bytes) : undefined;
  };
  for (const r of openCarriedIndex(store.root, record).all()) fold(r);
  // Decoded as the write side's folds read them (src/log/evidence-fields.ts), as a replay does.
  for (const { record } of storedRange(store, job.firstSeq, seq, decodeForWriteSide)) fold(record);
  return {
    seq,
    checkpoints: HEAP_PROJECTIONS.map((p, i) => [p.name, { version: p.version, seq, state: packState(p, states[i]) }]),
  };
});
