/**
 * Writes one archive file in a worker thread (src/services/retention/archive.ts): it reads the segment's
 * records from the store itself (read only here) and turns them into export lines off the writer's
 * thread, so archiving a segment costs ingest no turns. Answers with the archive's SHA-256 and
 * the segment's summary for the cut (its records are decoded here, never on the writer's thread).
 */
import { workerData } from 'node:worker_threads';
import { answerJob, openStoreInWorker, storedRange } from '../../log/worker-job.js';
import { archiveSegment, type ArchiveHeader, type SegmentJudge } from './archive.js';

/**
 * What the parent passes: the store, the archive's place and header (with the seq range), and how to judge the records.
 */
export interface ArchiveJob {
  readonly storePath: string;
  readonly dir: string;
  readonly name: string;
  readonly header: ArchiveHeader;
  readonly judge: SegmentJudge;
}

const job = workerData as ArchiveJob;
const store = openStoreInWorker(job.storePath);
void answerJob(store, () =>
  archiveSegment(
    job.dir,
    job.name,
    job.header,
    storedRange(store, job.header.fromSeq, job.header.toSeq),
    job.judge,
    false,
  ),
);
