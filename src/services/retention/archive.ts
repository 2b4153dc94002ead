import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { exportLineParts } from '../../log/export-line.js';
import { runWorkerJob } from '../../log/worker-job.js';
import { hashBytes } from '../../log/record.js';
import { type LogRecord } from '../../kernel/record.js';
import type { RetentionDays } from '../../log/retention/kinds.js';
import { summarizeSegment, type SegmentSummary } from '../../log/retention/plan.js';

/** Bytes an archive is written in at a time. */
const ARCHIVE_BUFFER = 8 << 20;

/** The format name on an archive's first line. */
export const ARCHIVE_FORMAT = 'vigil-log-segment/1';

/** An archive's first line: what it holds and the signed checkpoint that covers it. */
export interface ArchiveHeader {
  readonly archive: typeof ARCHIVE_FORMAT;
  /** The log's origin (its checkpoint key's name). */
  readonly origin: string;
  readonly fromSeq: number;
  readonly toSeq: number;
  /** The hash record `fromSeq` links to. */
  readonly prevHash: string;
  /** A signed checkpoint (note text) of a tree that includes record `toSeq`. */
  readonly checkpoint: string;
  readonly checkpointSize: number;
}

/**
 * The file name of the archive of records from..to (zero-padded, so names sort in log order); a
 * JetStream node adds its name, so the archives of several leaders gather into one folder without
 * one's unused copy of a segment taking the place of the one a cut names.
 */
export function archiveName(from: number, to: number, node?: string): string {
  return `segment-${String(from).padStart(12, '0')}-${String(to).padStart(12, '0')}${node ? `-${node}` : ''}.jsonl`;
}

/**
 * Writes one archive durably: the header, then the records as `vigil log export --raw` lines, to a
 * temporary file that is fsynced and renamed into place (then the folder is fsynced), so a crash
 * leaves either no archive or a whole one. Returns its SHA-256 (hex).
 */
export async function writeArchive(
  dir: string,
  name: string,
  header: ArchiveHeader,
  records: Iterable<{ record: LogRecord; bytes: Uint8Array }>,
  yieldTurns = true,
): Promise<string> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = join(dir, `.${name}.tmp`);
  const hash = createHash('sha256');
  const fd = openSync(tmp, 'w', 0o600);
  try {
    // Lines are encoded into one reused buffer, hashed and written a buffer at a time: a buffer
    // allocated per line (a megabyte for a record of 1000 events) cost more than the serializing.
    const buffer = Buffer.allocUnsafe(ARCHIVE_BUFFER);
    let used = 0;
    const flush = () => {
      hash.update(buffer.subarray(0, used));
      for (let at = 0; at < used;) at += writeSync(fd, buffer, at, used - at);
      used = 0;
    };
    const put = (text: string) => {
      // A UTF-16 code unit is at most 3 bytes of UTF-8.
      if (used + text.length * 3 > buffer.length) flush();
      if (text.length * 3 > buffer.length) {
        const b = Buffer.from(text, 'utf8');
        hash.update(b);
        for (let at = 0; at < b.length;) at += writeSync(fd, b, at, b.length - at);
      } else used += buffer.write(text, used, 'utf8');
    };
    put(`${JSON.stringify(header)}\n`);
    let n = 0;
    for (const { record, bytes } of records) {
      for (const part of exportLineParts(record, bytes)) put(part);
      // A turn for the writer now and then: archiving runs beside ingest, not instead of it.
      if (yieldTurns && ++n % 256 === 0) await new Promise((r) => setImmediate(r));
    }
    flush();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, join(dir, name));
  const dfd = openSync(dir, 'r');
  try {
    fsyncSync(dfd);
  } finally {
    closeSync(dfd);
  }
  return hash.digest('hex');
}

/** How an archived segment's records are judged for the cut: the policy's days at the expiry's time. */
export interface SegmentJudge {
  readonly days: RetentionDays;
  readonly now: string;
}

/** An archived segment: the archive's SHA-256 and what the cut needs to know of its records. */
export interface ArchivedSegment {
  readonly digest: string;
  readonly summary: SegmentSummary;
}

/**
 * Writes the archive of the segment `header` names (`writeArchive`) and summarizes its records for
 * the cut in the same pass (`summarizeSegment`). Throws when the records are not the whole segment.
 */
export async function archiveSegment(
  dir: string,
  name: string,
  header: ArchiveHeader,
  records: Iterable<{ record: LogRecord; bytes: Uint8Array }>,
  judge: SegmentJudge,
  yieldTurns = true,
): Promise<ArchivedSegment> {
  const summary = summarizeSegment(judge.days, judge.now);
  let expected = header.fromSeq;
  function* summarized(): Iterable<{ record: LogRecord; bytes: Uint8Array }> {
    for (const r of records) {
      if (r.record.seq !== expected++) throw new Error(`record ${expected - 1} is missing from the live store`);
      summary.add({ record: r.record, hash: hashBytes(r.bytes) });
      yield r;
    }
  }
  const digest = await writeArchive(dir, name, header, summarized(), yieldTurns);
  if (expected !== header.toSeq + 1)
    throw new Error(`records ${expected}..${header.toSeq} are not all in the live store`);
  return { digest, summary: summary.summary() };
}

/** An archive read back: its header, its record lines (still text) and its digest. */
export interface ReadArchive {
  readonly header: ArchiveHeader;
  readonly lines: readonly string[];
  readonly digest: string;
}

/** Reads an archive file; throws when its first line is not an archive header. */
export function readArchive(path: string): ReadArchive {
  const text = readFileSync(path);
  const digest = createHash('sha256').update(text).digest('hex');
  const lines = text
    .toString('utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const header = JSON.parse(lines[0] ?? '{}') as ArchiveHeader;
  if (header.archive !== ARCHIVE_FORMAT) throw new Error(`${path} is not a ${ARCHIVE_FORMAT} archive`);
  return { header, lines: lines.slice(1), digest };
}

/** `archiveSegment` in a worker thread (archive-worker.ts), which reads the records from the store at `storePath`. */
export function archiveSegmentOffThread(
  storePath: string,
  dir: string,
  name: string,
  header: ArchiveHeader,
  judge: SegmentJudge,
): Promise<ArchivedSegment> {
  return runWorkerJob<ArchivedSegment>(
    new URL('./archive-worker.js', import.meta.url),
    { storePath, dir, name, header, judge },
    'archive worker',
  );
}
