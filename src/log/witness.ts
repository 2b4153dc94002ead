import { openCheckpoint } from './offline-verify.js';
import { verifyConsistency } from './merkle.js';
import { signatureLine, type NoteSigner, type NoteVerifier } from './signed-note.js';

/**
 * A witness's decision on a checkpoint: it cosigns only a checkpoint signed by the log's key that
 * is consistent with the last one it cosigned (its state), so the log cannot show two histories.
 * The cosignature is a plain Ed25519 signed-note line by the witness's key over the checkpoint text.
 */
export function cosignCheckpoint(input: {
  readonly note: string;
  readonly logKey: NoteVerifier;
  readonly witness: NoteSigner;
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
      return { ok: false, reason: `refusing: the checkpoint of ${to} records is not consistent with the cosigned one of ${from}` };
    }
  }
  const line = signatureLine(text, input.witness);
  if (input.note.includes(line.slice(0, line.indexOf(' ', 2) + 1))) return { ok: true, note: input.note, size: next.checkpoint.size };
  return { ok: true, note: `${input.note}${line}`, size: next.checkpoint.size };
}
