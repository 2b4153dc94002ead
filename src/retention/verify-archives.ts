import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { asInstanceRecord } from '../events/read.js';
import type { LmdbEventLog } from '../log/lmdb-log.js';
import { parseCheckpoint } from '../log/checkpoint.js';
import { appendLeaf, frontierRoot, leafHash, type Frontier } from '../log/merkle.js';
import { readExportLine } from '../log/offline-verify.js';
import { GENESIS_HASH, decodeRecord, hashBytes, type LogRecord } from '../log/record.js';
import { openNote, parseNote, type NoteVerifier } from '../log/signed-note.js';
import { readArchive, type ReadArchive } from './archive.js';
import type { CarriedIndex } from './carried.js';

/** The verdict on the whole history: ok with what was checked, or the first problem. */
export type HistoryVerdict =
  | { readonly ok: true; readonly records: number; readonly archives: number; readonly root: string; readonly checkpoints: number }
  | { readonly ok: false; readonly badSeq?: number; readonly reason: string };

interface ArchivedAt { readonly digest: string; readonly fromSeq: number; readonly toSeq: number }

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
export function verifyWithArchives(log: LmdbEventLog, carried: CarriedIndex, dir: string, checkpointsStored: Iterable<[number, string]>, key?: NoteVerifier, archiveKeys: readonly NoteVerifier[] = []): HistoryVerdict {
  const named = archivesNamed(log, carried);
  const archives: ReadArchive[] = [];
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort();
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
    if (a.digest !== expected.digest) return { ok: false, badSeq: expected.fromSeq, reason: `archive ${file} is not the file the cut recorded (its SHA-256 differs): it was changed` };
    archives.push(a);
  }
  const due = new Map<number, { note: string; key: NoteVerifier | undefined }>();
  for (const [size, note] of checkpointsStored) due.set(size, { note, key });
  for (const a of archives) {
    const signer = [...(key ? [key] : []), ...archiveKeys].find((k) => k.name === a.header.origin);
    if (!signer && key) return { ok: false, badSeq: a.header.fromSeq, reason: `archive of ${a.header.fromSeq}..${a.header.toSeq} is signed by ${a.header.origin}, whose verifier key was not given (vigil log verify --archive-keys FILE, the keys \`vigil log public-key\` prints on each node)` };
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
    if (!cp?.ok || cp.checkpoint.size !== f.size) return `checkpoint of ${f.size} records: ${opened.ok ? 'does not parse' : opened.error}`;
    if (!Buffer.from(cp.checkpoint.root).equals(Buffer.from(frontierRoot(f)))) return `the root of ${f.size} records differs from its signed checkpoint`;
    checked++;
    return undefined;
  };
  const step = (seq: number, record: LogRecord, bytes: Uint8Array): HistoryVerdict | undefined => {
    if (seq !== f.size + 1) return { ok: false, badSeq: f.size + 1, reason: seq > f.size + 1 ? `records ${f.size + 1}..${seq - 1} are missing: no archive holds them` : `record ${seq} is out of place` };
    if (record.seq !== seq) return { ok: false, badSeq: seq, reason: `record stored as ${seq} says it is ${record.seq}` };
    if (record.prev !== prev) return { ok: false, badSeq: seq, reason: `chain broken: record ${seq} does not link to the hash of record ${seq - 1}` };
    prev = hashBytes(bytes);
    appendLeaf(f, leafHash(bytes));
    const bad = checkpointAt();
    return bad ? { ok: false, badSeq: seq, reason: bad } : undefined;
  };
  const empty = checkpointAt();
  if (empty) return { ok: false, reason: empty };
  for (const a of archives) {
    if (a.header.fromSeq !== f.size + 1) return { ok: false, badSeq: f.size + 1, reason: `records ${f.size + 1}..${a.header.fromSeq - 1} are missing: no archive holds them` };
    for (const line of a.lines) {
      const r = readExportLine(line, f.size + 1);
      if (!r.ok) return { ok: false, ...(r.badSeq !== undefined ? { badSeq: r.badSeq } : {}), reason: `archive of ${a.header.fromSeq}..${a.header.toSeq}: ${r.reason}` };
      const bad = step(r.record.seq, r.record, r.bytes);
      if (bad) return bad;
    }
    if (f.size !== a.header.toSeq) return { ok: false, badSeq: f.size + 1, reason: `archive of ${a.header.fromSeq}..${a.header.toSeq} ends after record ${f.size}` };
  }
  if (f.size + 1 !== log.first()) return { ok: false, badSeq: f.size + 1, reason: `records ${f.size + 1}..${log.first() - 1} are missing: no archive holds them` };
  for (const { seq, bytes } of log.readRaw(log.first())) {
    const record = decodeRecord(bytes);
    const bad = step(seq, record, bytes);
    if (bad) return bad;
  }
  const root = frontierRoot(f);
  if (log.tree.size() !== f.size || !Buffer.from(log.tree.root()).equals(Buffer.from(root))) return { ok: false, reason: 'the stored Merkle tree does not match the records' };
  if (checked < due.size) return { ok: false, reason: `${due.size - checked} checkpoint(s) are of sizes beyond the log (${[...due.keys()].filter((s) => s > f.size).join(", ")})` };
  return { ok: true, records: f.size, archives: archives.length, root: Buffer.from(root).toString('base64'), checkpoints: checked };
}
