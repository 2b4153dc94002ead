import { runWorkerJob } from '../../log/worker-job.js';
import type { LogVerdict } from '../../http/routes/log.js';
import { verifierKeyString, type NoteVerifier } from '../../log/signed-note.js';

/** What the verify worker is given: the store it verifies and the verifier key of its signed heads. */
export interface VerifyJob {
  readonly storePath: string;
  readonly key: string;
}

/**
 * `GET /api/v1/log/verify` for a serving instance: runs `vigil log verify`'s check of the store at
 * `storePath` in a worker thread (src/cli/instance/verify-worker.ts), on a read-only snapshot, so
 * the writer's thread only waits for its answer. One runs at a time: a request that comes while one
 * runs is answered with that one's verdict (of the head it read when it began), so any number of
 * requests cost one walk of the log.
 */
export function liveLogVerifier(storePath: string, verifier: NoteVerifier): () => Promise<LogVerdict> {
  let running: Promise<LogVerdict> | undefined;
  return () => {
    running ??= runWorkerJob<LogVerdict>(
      new URL('./verify-worker.js', import.meta.url),
      { storePath, key: verifierKeyString(verifier) } satisfies VerifyJob,
      'log verify worker',
    ).finally(() => {
      running = undefined;
    });
    return running;
  };
}
