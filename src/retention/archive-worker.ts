/**
 * Writes one archive file in a worker thread (src/retention/archive.ts): it reads the segment's
 * records from the store itself (read only here) and turns them into export lines off the writer's
 * thread, so archiving a segment costs ingest no turns. Posts `{digest}` or `{error}`.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { open } from 'lmdb';
import { decodeRecord } from '../log/record.js';
import { writeArchive, type ArchiveHeader } from './archive.js';

/** What the parent passes: the store, the archive's place and header, and the seq range. */
export interface ArchiveJob {
  readonly storePath: string;
  readonly dir: string;
  readonly name: string;
  readonly header: ArchiveHeader;
}

const job = workerData as ArchiveJob;
const root = open({ path: job.storePath, maxDbs: 64, compression: false, cache: false });
const records = root.openDB<Uint8Array, number>({ name: 'log', encoding: 'binary', keyEncoding: 'uint32', cache: false });

function* segment(): Iterable<{ record: ReturnType<typeof decodeRecord>; bytes: Uint8Array }> {
  let expected = job.header.fromSeq;
  for (const { key, value } of records.getRange({ start: job.header.fromSeq, end: job.header.toSeq + 1 })) {
    if (key !== expected++) throw new Error(`record ${expected - 1} is missing from the live store`);
    yield { record: decodeRecord(value), bytes: value };
  }
  if (expected !== job.header.toSeq + 1) throw new Error(`records ${expected}..${job.header.toSeq} are missing from the live store`);
}

writeArchive(job.dir, job.name, job.header, segment(), false).then(
  (digest) => parentPort!.postMessage({ digest }),
  (err: unknown) => parentPort!.postMessage({ error: (err as Error).message }),
).finally(() => { void root.close(); });
