/**
 * The baseline of the `hunt` bench: every record of a store read from LMDB and decoded to its events, in a worker
 * thread as a search's scan runs, with nothing matched or kept. Answers the events read and the milliseconds spent.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { eventsOfRecord } from '../src/events/record-types.js';
import { openStoreInWorker, storedRange } from '../src/log/worker-job.js';

const store = openStoreInWorker((workerData as { storePath: string }).storePath);
const head = store.meta.get('head')?.seq ?? 0;
const t0 = performance.now();
let events = 0;
for (const { record } of storedRange(store, 1, head)) events += eventsOfRecord(record).length;
parentPort!.postMessage({ events, ms: performance.now() - t0 });
await store.root.close();
