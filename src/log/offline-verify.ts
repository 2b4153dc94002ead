import { parseCheckpoint, type Checkpoint } from './checkpoint.js';
import { exportLine } from './export-line.js';
import { appendLeaf, frontierRoot, leafHash, rootFromInclusion, verifyConsistency, type Frontier } from './merkle.js';
import { decodeRecord, hashBytes } from './record.js';
import { GENESIS_HASH, type LogRecord } from '../kernel/record.js';
import { keyChain, openWithAny } from './key-rotation.js';
import { rotationNotesOf } from './rotation-records.js';
import { parseNote, type NoteVerifier } from './signed-note.js';

/**
 * Verification an outsider runs with no store: an export against a signed checkpoint, two
 * checkpoints against a consistency proof, one record against an inclusion proof.
 */

/** A verdict: ok with what was proven, or the first bad record (when one can be named) and why. */
export type Verdict<T> =
  ({ readonly ok: true } & T) | { readonly ok: false; readonly badSeq?: number; readonly reason: string };

/**
 * Opens a checkpoint note with the log's verifier key (or any key of its chain, src/log/key-rotation.ts)
 * and parses it.
 */
export function openCheckpoint(
  note: string,
  key: NoteVerifier | readonly NoteVerifier[],
): Verdict<{ checkpoint: Checkpoint }> {
  const opened = openWithAny(note, Array.isArray(key) ? key : [key as NoteVerifier]);
  if (!opened.ok) return { ok: false, reason: `checkpoint: ${opened.error}` };
  const cp = parseCheckpoint(opened.text);
  if (!cp.ok) return { ok: false, reason: `checkpoint: ${cp.error}` };
  const name = opened.key!.name;
  if (cp.checkpoint.origin !== name)
    return { ok: false, reason: `checkpoint origin ${cp.checkpoint.origin} is not the key's name ${name}` };
  return { ok: true, checkpoint: cp.checkpoint };
}

/** The stored bytes and record of one `vigil log export --raw` line, checked against each other. */
export function readExportLine(line: string, expectedSeq: number): Verdict<{ bytes: Uint8Array; record: LogRecord }> {
  let raw: unknown;
  try {
    raw = (JSON.parse(line) as { raw?: unknown }).raw;
  } catch {
    return { ok: false, badSeq: expectedSeq, reason: `line ${expectedSeq} is not JSON` };
  }
  if (typeof raw !== 'string')
    return {
      ok: false,
      badSeq: expectedSeq,
      reason: `line ${expectedSeq} has no raw record bytes (export with --raw)`,
    };
  // A Buffer, as the exporter decoded from LMDB, so byte fields render the same way in both.
  const bytes = Buffer.from(raw, 'base64');
  let record: LogRecord;
  try {
    record = decodeRecord(bytes);
  } catch {
    return { ok: false, badSeq: expectedSeq, reason: `line ${expectedSeq}: the record bytes do not decode` };
  }
  // The readable fields must be exactly what the bytes say, so a reader of the JSON reads what was hashed.
  if (exportLine(record, bytes) !== `${line.trimEnd()}\n`)
    return {
      ok: false,
      badSeq: record.seq,
      reason: `record ${record.seq}: the exported fields differ from its record bytes`,
    };
  return { ok: true, bytes, record };
}

/**
 * Recomputes the chain and the Merkle root of the first `checkpoint.size` records of an export and
 * compares them with a signed checkpoint. Names the first record that is changed, missing, out of
 * place or cut off. The checkpoint's signature is checked with `key` and the keys the export's
 * `LogKeyRotated` records (and `rotations`) link to it: an auditor who pinned the key before a rotation
 * verifies a checkpoint the new key signed.
 */
export function verifyExport(
  lines: Iterable<string>,
  note: string,
  key: NoteVerifier | readonly NoteVerifier[],
  rotations: readonly string[] = [],
): Verdict<{ size: number; root: string; beyond: number }> {
  const parsed = parseNote(note);
  const unsigned = parsed.ok ? parseCheckpoint(parsed.text) : undefined;
  if (!parsed.ok) return { ok: false, reason: `checkpoint: ${parsed.error}` };
  if (!unsigned?.ok) return { ok: false, reason: `checkpoint: ${unsigned?.error}` };
  const { size, root } = unsigned.checkpoint;
  const seen = [...rotations];
  const f: Frontier = { size: 0, roots: [] };
  let prev = GENESIS_HASH;
  let sizeRoot: Uint8Array | undefined = size === 0 ? frontierRoot(f) : undefined;
  for (const line of lines) {
    if (line.trim() === '') continue;
    // Lines past the checkpoint are not covered by its signature, but they must still chain on:
    // an export is never reported as verified while holding lines that were not checked.
    const seq = f.size + 1;
    const r = readExportLine(line, seq);
    if (!r.ok) return r;
    if (r.record.seq !== seq) {
      return {
        ok: false,
        badSeq: seq,
        reason:
          r.record.seq > seq
            ? `record ${seq} is missing (the next line holds ${r.record.seq})`
            : `record ${r.record.seq} is out of place (expected ${seq})`,
      };
    }
    if (r.record.prev !== prev)
      return {
        ok: false,
        badSeq: seq - 1,
        reason: `record ${seq - 1} does not hash to the link record ${seq} holds: it was changed`,
      };
    prev = hashBytes(r.bytes);
    appendLeaf(f, leafHash(r.bytes));
    if (f.size === size) sizeRoot = frontierRoot(f);
    seen.push(...rotationNotesOf(r.record));
  }
  // The signature last, once every rotation the export holds is known.
  const opened = openCheckpoint(note, keyChain(Array.isArray(key) ? key : [key as NoteVerifier], seen));
  if (!opened.ok) return opened;
  if (f.size < size)
    return {
      ok: false,
      badSeq: f.size + 1,
      reason: `the export ends after record ${f.size}; the checkpoint covers ${size}`,
    };
  if (!Buffer.from(sizeRoot!).equals(Buffer.from(root))) {
    // Every link held, so only the last record can differ from what was checkpointed (or the whole log was rewritten).
    return {
      ok: false,
      badSeq: size,
      reason:
        `the root of ${size} records differs from the checkpoint's: record ${size} was changed or the log was ` +
        `rewritten`,
    };
  }
  return { ok: true, size, root: Buffer.from(root).toString('base64'), beyond: f.size - size };
}

const hashes = (path: readonly string[]) => path.map((h) => new Uint8Array(Buffer.from(h, 'base64')));

/**
 * Checks that the newer signed checkpoint extends the older one, with an RFC 9162 consistency proof; each
 * signed by a key of `key`'s chain (the old checkpoint by a key a rotation replaced, the new by its successor).
 */
export function verifyCheckpointConsistency(
  oldNote: string,
  newNote: string,
  key: NoteVerifier | readonly NoteVerifier[],
  proof: readonly string[],
): Verdict<{ from: number; to: number }> {
  const a = openCheckpoint(oldNote, key);
  if (!a.ok) return { ok: false, reason: `old ${a.reason}` };
  const b = openCheckpoint(newNote, key);
  if (!b.ok) return { ok: false, reason: `new ${b.reason}` };
  const [from, to] = [a.checkpoint.size, b.checkpoint.size];
  if (from > to) return { ok: false, reason: `the old checkpoint (${from}) is larger than the new one (${to})` };
  if (!verifyConsistency(from, to, a.checkpoint.root, b.checkpoint.root, hashes(proof))) {
    return {
      ok: false,
      reason:
        from === to
          ? `two checkpoints of ${from} records with different roots: the log forked`
          : `the log of ${to} records is not an extension of the log of ${from} records (fork or rewrite)`,
    };
  }
  return { ok: true, from, to };
}

/** Checks that one exported record is in the tree of a signed checkpoint, with an RFC 9162 inclusion proof. */
export function verifyRecordInclusion(
  line: string,
  note: string,
  key: NoteVerifier | readonly NoteVerifier[],
  proof: readonly string[],
): Verdict<{ seq: number; size: number }> {
  const cp = openCheckpoint(note, key);
  if (!cp.ok) return cp;
  let seq: number;
  try {
    seq = Number((JSON.parse(line) as { seq?: unknown }).seq);
  } catch {
    return { ok: false, reason: 'the record line is not JSON' };
  }
  const r = readExportLine(line, seq);
  if (!r.ok) return r;
  const root = rootFromInclusion(r.record.seq - 1, cp.checkpoint.size, leafHash(r.bytes), hashes(proof));
  if (!root || !Buffer.from(root).equals(Buffer.from(cp.checkpoint.root)))
    return {
      ok: false,
      badSeq: r.record.seq,
      reason: `record ${r.record.seq} is not in the checkpointed log of ${cp.checkpoint.size} records`,
    };
  return { ok: true, seq: r.record.seq, size: cp.checkpoint.size };
}
