/**
 * Verifies the log of a serving instance in a worker thread (src/cli/instance/live-verify.ts): the
 * same check as `vigil log verify`, on a snapshot of the writer's own environment, scheduled below
 * the writer so that ingest goes first when the CPU is short.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { retryOnCut } from '../../log/store-snapshot.js';
import { lowerThreadPriority } from '../../projections/read-side/thread-priority.js';
import { logVerify } from '../log-commands.js';
import type { VerifyJob } from './live-verify.js';
import { parseVerifierKey } from '../../log/signed-note.js';

/** Nice steps below the writer, as the read side's worker runs (`limits.readSideNice`'s default). */
const BELOW_WRITER = 10;

const job = workerData as VerifyJob;
lowerThreadPriority(BELOW_WRITER);
retryOnCut(() => logVerify(job.storePath, parseVerifierKey(job.key), {}, undefined, [], true)).then(
  (result) => parentPort!.postMessage({ result }),
  (err: unknown) => parentPort!.postMessage({ error: (err as Error).message }),
);
