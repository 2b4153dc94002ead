/**
 * The worker thread of a search back in time (retro-search.ts): it indexes the indicators it was started with, then
 * answers each chunk of stored events it is sent with the ids of those that match an indicator at their own time. The
 * scan runs here, off the thread that serves requests and writes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createIndicatorIndex } from '../../detection/intel/indicator-index.js';
import type { Indicator } from '../../detection/intel/types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';

/** What the worker is started with. */
export interface RetroWorkerData {
  readonly feed: string;
  readonly version: string;
  readonly indicators: Indicator[];
}

/** What the worker answers: `ready` once, then `hits` (the matching events' ids) or `error` per chunk. */
export type FromRetroWorker = { kind: 'ready' } | { kind: 'hits'; ids: string[] } | { kind: 'error'; message: string };

if (parentPort) {
  const port = parentPort;
  const post = (m: FromRetroWorker) => port.postMessage(m);
  const data = workerData as RetroWorkerData;
  const index = createIndicatorIndex();
  index.add(data.indicators, { feed: data.feed, version: data.version });
  port.on('message', (events: NormalizedEvent[]) => {
    try {
      post({ kind: 'hits', ids: events.filter((e) => index.match(e, Date.parse(e.time)).length > 0).map((e) => e.id) });
    } catch (err) {
      post({ kind: 'error', message: (err as Error).message });
    }
  });
  post({ kind: 'ready' });
}
