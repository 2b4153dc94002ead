import { runWorkerJob } from '../log/worker-job.js';
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
  return runWorkerJob<RefoldResult>(new URL('./refold-worker.js', import.meta.url), { storePath, carried, firstSeq } satisfies RefoldJob, 'refold worker');
}
