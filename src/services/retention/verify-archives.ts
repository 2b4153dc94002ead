import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { asInstanceRecord } from '../../events/read.js';
import type { LogView } from '../../log/log-view.js';
import { readExportLine } from '../../log/offline-verify.js';
import { encodeRecord, hashBytes } from '../../log/record.js';
import type { LogRecord } from '../../kernel/record.js';
import type { NoteVerifier } from '../../log/signed-note.js';
import { readArchive, type ReadArchive } from './archive.js';
import type { CarriedIndex } from '../../log/retention/carried.js';
import type { RetentionDays } from '../../log/retention/kinds.js';
import { asRecord, carriedBy } from '../../log/retention/plan.js';
import { startWalk, walkHistory, walkVerdict, type CutCheck, type DueCheckpoint } from './history-walk.js';

/**
 * Why a `RecordsCarriedForward` record's copies are not what they claim, or undefined: each copy
 * must re-encode to the bytes whose hash it names (so a copy cannot say something its original did not).
 */
export function carriedCopyProblem(r: LogRecord): string | undefined {
  const held = carriedBy(r);
  if (!held) return undefined;
  for (const c of held) {
    if (!(c.seq < r.seq)) return `record ${r.seq} carries a record ${c.seq} that is not before it`;
    if (hashBytes(encodeRecord(asRecord(c))) !== c.hash)
      return (
        `record ${r.seq} carries a copy of record ${c.seq} that does not hash to the hash it names: the copy ` +
        `differs from the original`
      );
  }
  return undefined;
}

/** The verdict on the whole history: ok with what was checked, or the first problem. */
export type HistoryVerdict =
  | {
      readonly ok: true;
      readonly records: number;
      readonly archives: number;
      readonly root: string;
      readonly checkpoints: number;
    }
  | { readonly ok: false; readonly badSeq?: number; readonly reason: string };

interface ArchivedAt {
  readonly digest: string;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** Every archive the cuts name (the last cut in the live store, earlier ones carried forward), by file name. */
function archivesNamed(log: LogView, carried: CarriedIndex): Map<string, ArchivedAt> {
  const named = new Map<string, ArchivedAt>();
  const take = (r: LogRecord) => {
    const known = asInstanceRecord(r);
    if (known?.type !== 'LogSegmentsExpired') return;
    for (const a of known.data.archives) named.set(a.file, a);
  };
  for (const r of carried.all()) take(r);
  for (const r of log.read(log.first())) take(r);
  return named;
}

/** Reads the archives in `dir` that a cut names, in file order; each must be the very file its cut recorded. */
function namedArchivesIn(dir: string, named: ReadonlyMap<string, ArchivedAt>): ReadArchive[] | HistoryVerdict {
  const archives: ReadArchive[] = [];
  let files: string[];
  try {
    files = readdirSync(dir)
      .filter((f) => f.endsWith('.jsonl'))
      .sort();
  } catch (err) {
    return { ok: false, reason: `cannot read the archive folder: ${(err as Error).message}` };
  }
  for (const file of files) {
    const expected = named.get(file);
    if (!expected) continue;
    let a: ReadArchive;
    try {
      a = readArchive(join(dir, file));
    } catch (err) {
      return { ok: false, reason: `archive ${file}: ${(err as Error).message}` };
    }
    if (a.digest !== expected.digest)
      return {
        ok: false,
        badSeq: expected.fromSeq,
        reason: `archive ${file} is not the file the cut recorded (its SHA-256 differs): it was changed`,
      };
    archives.push(a);
  }
  return archives;
}

/** What the first pass has read so far: the policy in force, the last copies carried forward, and the cuts. */
interface CutsRead {
  days: RetentionDays | undefined;
  wrapper: LogRecord | undefined;
  readonly cuts: CutCheck[];
}

/** Notes what one record says of the cuts; returns why the copies it carries are not what they claim, if so. */
function noteCut(read: CutsRead, r: LogRecord): string | undefined {
  const known = asInstanceRecord(r);
  if (known?.type === 'RetentionPolicyRecorded') read.days = known.data.enabled ? known.data.days : undefined;
  if (known?.type === 'RecordsCarriedForward') {
    const bad = carriedCopyProblem(r);
    if (bad) return bad;
    read.wrapper = r;
  }
  if (known?.type === 'LogSegmentsExpired') {
    const carried = new Map<number, string>();
    if (read.wrapper?.seq === r.seq - 1) for (const c of carriedBy(read.wrapper)!) carried.set(c.seq, c.hash);
    read.cuts.push({
      seq: r.seq,
      at: r.at,
      days: read.days,
      ranges: known.data.archives.map((x) => [x.fromSeq, x.toSeq] as const),
      carried,
    });
  }
  return undefined;
}

/** The archive lines of the records that say what a cut did, told apart without parsing every line. */
const CUT_TYPES =
  /^\{"seq":\d+,"at":"[^"]*","type":"(RetentionPolicyRecorded|RecordsCarriedForward|LogSegmentsExpired)"/;

/** Every cut the archives and the live store record, in log order, or the first carried copy that is not intact. */
function recordedCuts(archives: readonly ReadArchive[], log: LogView): CutCheck[] | HistoryVerdict {
  const read: CutsRead = { days: undefined, wrapper: undefined, cuts: [] };
  for (const a of archives) {
    for (const line of a.lines) {
      if (!CUT_TYPES.test(line)) continue;
      const r = readExportLine(line, 0);
      const bad = r.ok ? noteCut(read, r.record) : undefined;
      if (bad) return { ok: false, badSeq: r.ok ? r.record.seq : undefined, reason: bad } as HistoryVerdict;
    }
  }
  for (const r of log.read(log.first())) {
    const bad = noteCut(read, r);
    if (bad) return { ok: false, badSeq: r.seq, reason: bad };
  }
  return read.cuts;
}

/**
 * The checkpoints the walk must meet, by size: the stored ones (opened with `key`) and each archive's (with the key its
 * origin names); refused when an archive's signer is not among the keys given.
 */
function checkpointsDue(
  checkpointsStored: Iterable<[number, string]>,
  archives: readonly ReadArchive[],
  key: NoteVerifier | undefined,
  archiveKeys: readonly NoteVerifier[],
): Map<number, DueCheckpoint> | HistoryVerdict {
  const due = new Map<number, DueCheckpoint>();
  for (const [size, note] of checkpointsStored) due.set(size, { note, key });
  for (const a of archives) {
    const signer = [...(key ? [key] : []), ...archiveKeys].find((k) => k.name === a.header.origin);
    if (!signer && key)
      return {
        ok: false,
        badSeq: a.header.fromSeq,
        reason:
          `archive of ${a.header.fromSeq}..${a.header.toSeq} is signed by ${a.header.origin}, whose verifier ` +
          `key was not given (vigil log verify --archive-keys FILE, the keys \`vigil log public-key\` prints on each ` +
          `node)`,
      };
    due.set(a.header.checkpointSize, { note: a.header.checkpoint, key: signer });
  }
  return due;
}

/**
 * Verifies the whole history, from record 1: every archive in `dir` must be one a cut names (same
 * SHA-256), the archives and the live store must chain without a gap from record 1 to the head,
 * each archive's checkpoint must sign the Merkle root recomputed at its size (so must the stored
 * checkpoints), and the root at the head must be the stored tree's. An archive's checkpoint is
 * checked with the key its origin names: `key` (this store's) or one of `archiveKeys` (on a
 * JetStream cluster, the keys of the nodes that led when the archives were written).
 */
export function verifyWithArchives(
  log: LogView,
  carried: CarriedIndex,
  dir: string,
  checkpointsStored: Iterable<[number, string]>,
  key?: NoteVerifier,
  archiveKeys: readonly NoteVerifier[] = [],
): HistoryVerdict {
  const archives = namedArchivesIn(dir, archivesNamed(log, carried));
  if (!Array.isArray(archives)) return archives;
  // First pass, over the few records that say what each cut did: the policy in force, the copies
  // carried forward, the ranges expired. The second pass (the chain walk) holds every expired record to them.
  const cuts = recordedCuts(archives, log);
  if (!Array.isArray(cuts)) return cuts;
  const due = checkpointsDue(checkpointsStored, archives, key, archiveKeys);
  if (!(due instanceof Map)) return due;
  const walk = startWalk(cuts, due);
  return walkHistory(walk, archives, log) ?? walkVerdict(walk, log, archives.length);
}
