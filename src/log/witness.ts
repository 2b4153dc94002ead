import { openCheckpoint } from './offline-verify.js';
import { verifyConsistency } from './merkle.js';
import {
  ED25519,
  keyHash,
  parseNote,
  signatureLine,
  verifierOf,
  type NoteSigner,
  type NoteVerifier,
} from './signed-note.js';

/**
 * A witness's decision on a checkpoint: it cosigns only a checkpoint signed by the log's key that
 * is consistent with the last one it cosigned (its state), so the log cannot show two histories.
 * The cosignature is a C2SP tlog-cosignature/v1 line (a witness key of type 0x04, stamped with
 * `time`); a key of type 0x01, as earlier witnesses made, signs the checkpoint text plainly.
 */
export function cosignCheckpoint(input: {
  readonly note: string;
  /** The log's key, or its keys (before and after a rotation: docs/log.md, "Rotating the signing key"). */
  readonly logKey: NoteVerifier | readonly NoteVerifier[];
  readonly witness: NoteSigner;
  /** The cosignature's time, unix seconds. */
  readonly time: number;
  /** The last checkpoint this witness cosigned, if any. */
  readonly last?: string;
  /** The consistency proof from `last`'s size to the note's (base64 hashes). */
  readonly proof?: readonly string[];
}): { ok: true; note: string; size: number } | { ok: false; reason: string } {
  const next = openCheckpoint(input.note, input.logKey);
  if (!next.ok) return { ok: false, reason: next.reason };
  const text = input.note.slice(0, input.note.lastIndexOf('\n\n') + 1);
  if (input.last !== undefined) {
    const prev = openCheckpoint(input.last, input.logKey);
    if (!prev.ok) return { ok: false, reason: `the witness state: ${prev.reason}` };
    const [from, to] = [prev.checkpoint.size, next.checkpoint.size];
    if (to < from) return { ok: false, reason: `refusing a checkpoint of ${to} records: already cosigned ${from}` };
    const proof = (input.proof ?? []).map((h) => new Uint8Array(Buffer.from(h, 'base64')));
    if (!verifyConsistency(from, to, prev.checkpoint.root, next.checkpoint.root, proof)) {
      return {
        ok: false,
        reason: `refusing: the checkpoint of ${to} records is not consistent with the cosigned one of ${from}`,
      };
    }
  }
  const line = signatureLine(text, input.witness, input.time);
  const hash = keyHash(input.witness.name, verifierOf(input.witness).publicKey, input.witness.type ?? ED25519);
  const parsed = parseNote(input.note);
  if (parsed.ok && parsed.signatures.some((s) => s.name === input.witness.name && s.keyHash === hash))
    return { ok: true, note: input.note, size: next.checkpoint.size };
  return { ok: true, note: `${input.note}${line}`, size: next.checkpoint.size };
}
