import { runWorkerJob } from '../log/worker-job.js';
import type { Checkpoint } from './heap-models.js';

/**
 * What the refold worker is given: the store and the cut's first seq (it reads the records carried forward from the
 * store).
 */
export interface RefoldJob {
  readonly storePath: string;
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
export function foldFromCutOffThread(storePath: string, firstSeq: number): Promise<RefoldResult> {
  return runWorkerJob<RefoldResult>(
    new URL('./refold-worker.js', import.meta.url),
    { storePath, firstSeq } satisfies RefoldJob,
    'refold worker',
  );
}
