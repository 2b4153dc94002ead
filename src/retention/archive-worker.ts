/**
 * Writes one archive file in a worker thread (src/retention/archive.ts): it reads the segment's
 * records from the store itself (read only here) and turns them into export lines off the writer's
 * thread, so archiving a segment costs ingest no turns. Answers with the archive's SHA-256.
 */
import { workerData } from 'node:worker_threads';
import { answerJob, openStoreInWorker, storedRange } from '../log/worker-job.js';
import { writeArchive, type ArchiveHeader } from './archive.js';

/** What the parent passes: the store, the archive's place and header, and the seq range. */
export interface ArchiveJob {
  readonly storePath: string;
  readonly dir: string;
  readonly name: string;
  readonly header: ArchiveHeader;
}

const job = workerData as ArchiveJob;
const store = openStoreInWorker(job.storePath);
void answerJob(store, () => writeArchive(job.dir, job.name, job.header, storedRange(store, job.header.fromSeq, job.header.toSeq), false));
