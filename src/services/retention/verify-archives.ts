import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { asInstanceRecord } from '../../events/read.js';
import type { LmdbEventLog } from '../../log/lmdb-log.js';
import { parseCheckpoint } from '../../log/checkpoint.js';
import { appendLeaf, frontierRoot, leafHash, type Frontier } from '../../log/merkle.js';
import { readExportLine } from '../../log/offline-verify.js';
import { decodeRecord, encodeRecord, hashBytes } from '../../log/record.js';
import { GENESIS_HASH, type LogRecord } from '../../kernel/record.js';
import { openNote, parseNote, type NoteVerifier } from '../../log/signed-note.js';
import { readArchive, type ReadArchive } from './archive.js';
import type { CarriedIndex } from '../../log/retention/carried.js';
import type { RetentionDays } from '../../log/retention/kinds.js';
import { asRecord, carriedBy, stillKept } from '../../log/retention/plan.js';

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

/** One cut as the log recorded it: what it expired, what it carried forward, and the policy it had to honour. */
interface CutCheck {
  readonly seq: number;
  readonly at: string;
  readonly days: RetentionDays | undefined;
  readonly ranges: ReadonlyArray<readonly [number, number]>;
  /** Original seq → hash of every copy the cut's RecordsCarriedForward holds (deleted as matched). */
  readonly carried: Map<number, string>;
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
function archivesNamed(log: LmdbEventLog, carried: CarriedIndex): Map<string, ArchivedAt> {
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

/**
 * Verifies the whole history, from record 1: every archive in `dir` must be one a cut names (same
 * SHA-256), the archives and the live store must chain without a gap from record 1 to the head,
 * each archive's checkpoint must sign the Merkle root recomputed at its size (so must the stored
 * checkpoints), and the root at the head must be the stored tree's. An archive's checkpoint is
 * checked with the key its origin names: `key` (this store's) or one of `archiveKeys` (on a
 * JetStream cluster, the keys of the nodes that led when the archives were written).
 */
export function verifyWithArchives(
  log: LmdbEventLog,
  carried: CarriedIndex,
  dir: string,
  checkpointsStored: Iterable<[number, string]>,
  key?: NoteVerifier,
  archiveKeys: readonly NoteVerifier[] = [],
): HistoryVerdict {
  const named = archivesNamed(log, carried);
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
  // First pass, over the few records that say what each cut did: the policy in force, the copies
  // carried forward, the ranges expired. The second pass (the chain walk) holds every expired record to them.
  const cuts: CutCheck[] = [];
  {
    let days: RetentionDays | undefined;
    let wrapper: LogRecord | undefined;
    const note = (r: LogRecord): string | undefined => {
      const known = asInstanceRecord(r);
      if (known?.type === 'RetentionPolicyRecorded') days = known.data.enabled ? known.data.days : undefined;
      if (known?.type === 'RecordsCarriedForward') {
        const bad = carriedCopyProblem(r);
        if (bad) return bad;
        wrapper = r;
      }
      if (known?.type === 'LogSegmentsExpired') {
        const carried = new Map<number, string>();
        if (wrapper?.seq === r.seq - 1) for (const c of carriedBy(wrapper)!) carried.set(c.seq, c.hash);
        cuts.push({
          seq: r.seq,
          at: r.at,
          days,
          ranges: known.data.archives.map((x) => [x.fromSeq, x.toSeq] as const),
          carried,
        });
      }
      return undefined;
    };
    const CUT_TYPES =
      /^\{"seq":\d+,"at":"[^"]*","type":"(RetentionPolicyRecorded|RecordsCarriedForward|LogSegmentsExpired)"/;
    for (const a of archives) {
      for (const line of a.lines) {
        if (!CUT_TYPES.test(line)) continue;
        const r = readExportLine(line, 0);
        const bad = r.ok ? note(r.record) : undefined;
        if (bad) return { ok: false, badSeq: r.ok ? r.record.seq : undefined, reason: bad } as HistoryVerdict;
      }
    }
    for (const r of log.read(log.first())) {
      const bad = note(r);
      if (bad) return { ok: false, badSeq: r.seq, reason: bad };
    }
  }
  let cutAt = 0;
  const cutOf = (seq: number): CutCheck | undefined => {
    while (cutAt < cuts.length && cuts[cutAt]!.ranges.every(([, to]) => to < seq)) cutAt++;
    const c = cuts[cutAt];
    return c?.ranges.some(([from, to]) => from <= seq && seq <= to) ? c : undefined;
  };
  /**
   * Whether an expired record (or a copy it carried) was carried forward intact, or dropped as the recorded policy
   * allowed.
   */
  const judge = (cut: CutCheck, r: LogRecord, hash: string): string | undefined => {
    const copy = cut.carried.get(r.seq);
    if (copy !== undefined) {
      if (copy !== hash)
        return `the cut at record ${cut.seq} carried forward a copy of record ${r.seq} that differs from the original`;
      cut.carried.delete(r.seq);
      return undefined;
    }
    const held = carriedBy(r);
    if (held) {
      for (const c of held) {
        const bad = judge(cut, asRecord(c), c.hash);
        if (bad) return bad;
      }
      return undefined;
    }
    if (!cut.days) return `the cut at record ${cut.seq} expired records under no retention policy recorded before it`;
    if (stillKept(r.type, r.at, cut.days, cut.at))
      return (
        `the cut at record ${cut.seq} dropped record ${r.seq} (${r.type}), which the retention policy recorded ` +
        `before it keeps`
      );
    return undefined;
  };
  const due = new Map<number, { note: string; key: NoteVerifier | undefined }>();
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
  const f: Frontier = { size: 0, roots: [] };
  let prev = GENESIS_HASH;
  let checked = 0;
  const checkpointAt = (): string | undefined => {
    const at = due.get(f.size);
    if (at === undefined) return undefined;
    const opened = at.key ? openNote(at.note, at.key) : parseNote(at.note);
    const cp = opened.ok ? parseCheckpoint(opened.text) : undefined;
    if (!cp?.ok || cp.checkpoint.size !== f.size)
      return `checkpoint of ${f.size} records: ${opened.ok ? 'does not parse' : opened.error}`;
    if (!Buffer.from(cp.checkpoint.root).equals(Buffer.from(frontierRoot(f))))
      return `the root of ${f.size} records differs from its signed checkpoint`;
    checked++;
    return undefined;
  };
  const step = (seq: number, record: LogRecord, bytes: Uint8Array): HistoryVerdict | undefined => {
    if (seq !== f.size + 1)
      return {
        ok: false,
        badSeq: f.size + 1,
        reason:
          seq > f.size + 1
            ? `records ${f.size + 1}..${seq - 1} are missing: no archive holds them`
            : `record ${seq} is out of place`,
      };
    if (record.seq !== seq)
      return { ok: false, badSeq: seq, reason: `record stored as ${seq} says it is ${record.seq}` };
    if (record.prev !== prev)
      return {
        ok: false,
        badSeq: seq,
        reason: `chain broken: record ${seq} does not link to the hash of record ${seq - 1}`,
      };
    prev = hashBytes(bytes);
    appendLeaf(f, leafHash(bytes));
    const cut = cutOf(seq);
    const dropped = cut ? judge(cut, record, prev) : undefined;
    if (dropped) return { ok: false, badSeq: seq, reason: dropped };
    const bad = checkpointAt();
    return bad ? { ok: false, badSeq: seq, reason: bad } : undefined;
  };
  const empty = checkpointAt();
  if (empty) return { ok: false, reason: empty };
  for (const a of archives) {
    if (a.header.fromSeq !== f.size + 1)
      return {
        ok: false,
        badSeq: f.size + 1,
        reason: `records ${f.size + 1}..${a.header.fromSeq - 1} are missing: no archive holds them`,
      };
    for (const line of a.lines) {
      const r = readExportLine(line, f.size + 1);
      if (!r.ok)
        return {
          ok: false,
          ...(r.badSeq !== undefined ? { badSeq: r.badSeq } : {}),
          reason: `archive of ${a.header.fromSeq}..${a.header.toSeq}: ${r.reason}`,
        };
      const bad = step(r.record.seq, r.record, r.bytes);
      if (bad) return bad;
    }
    if (f.size !== a.header.toSeq)
      return {
        ok: false,
        badSeq: f.size + 1,
        reason: `archive of ${a.header.fromSeq}..${a.header.toSeq} ends after record ${f.size}`,
      };
  }
  if (f.size + 1 !== log.first())
    return {
      ok: false,
      badSeq: f.size + 1,
      reason: `records ${f.size + 1}..${log.first() - 1} are missing: no archive holds them`,
    };
  for (const { seq, bytes } of log.readRaw(log.first())) {
    const record = decodeRecord(bytes);
    const bad = step(seq, record, bytes);
    if (bad) return bad;
  }
  for (const cut of cuts) {
    const [stray] = cut.carried.keys();
    if (stray !== undefined)
      return {
        ok: false,
        badSeq: stray,
        reason: `the cut at record ${cut.seq} carried forward a record ${stray} that it did not expire`,
      };
  }
  const root = frontierRoot(f);
  if (log.tree.size() !== f.size || !Buffer.from(log.tree.root()).equals(Buffer.from(root)))
    return { ok: false, reason: 'the stored Merkle tree does not match the records' };
  if (checked < due.size)
    return {
      ok: false,
      reason:
        `${due.size - checked} checkpoint(s) are of sizes beyond the log ` +
        `(${[...due.keys()].filter((s) => s > f.size).join(', ')})`,
    };
  return {
    ok: true,
    records: f.size,
    archives: archives.length,
    root: Buffer.from(root).toString('base64'),
    checkpoints: checked,
  };
}
