import { Worker } from 'node:worker_threads';
import type { LogRecord } from '../log/record.js';
import type { Checkpoint } from './heap-models.js';

/** What the refold worker is given: the store, the records carried forward, and the cut's first seq. */
export interface RefoldJob {
  readonly storePath: string;
  readonly carried: readonly LogRecord[];
  readonly firstSeq: number;
}

/** The instance's heap models folded from a cut up to `seq` (the committed head the worker saw), as checkpoints. */
export interface RefoldResult {
  readonly seq: number;
  readonly checkpoints: Array<[string, Checkpoint]>;
}

/**
 * Folds the instance's heap models (`HEAP_PROJECTIONS`) from a retention cut in a worker thread
 * (src/projections/refold-worker.ts), reading the store at `storePath`.
 */
export function foldFromCutOffThread(storePath: string, carried: readonly LogRecord[], firstSeq: number): Promise<RefoldResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./refold-worker.js', import.meta.url), { workerData: { storePath, carried, firstSeq } satisfies RefoldJob });
    worker.once('message', (m: RefoldResult | { error: string }) => ('error' in m ? reject(new Error(m.error)) : resolve(m)));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`refold worker exited with ${code}`)));
  });
}
