import { parseCheckpoint } from './checkpoint.js';
import { openCheckpoint } from './offline-verify.js';
import { keyHash, parseNote, verifierOf, ED25519, type NoteSigner, type NoteVerifier } from './signed-note.js';
import { cosignCheckpoint } from './witness.js';
import { formatSizeAnswer, parseAddCheckpoint, SIZE_CONTENT_TYPE } from './witness-protocol.js';

/** A witness's answer to one add-checkpoint request, and the state to persist before sending a 200. */
export interface WitnessAnswer {
  readonly status: 200 | 400 | 403 | 404 | 409 | 422;
  readonly contentType: string;
  readonly body: string;
  /** On a 200: the cosigned checkpoint, the origin's new state (persisted before the answer leaves). */
  readonly save?: { readonly origin: string; readonly note: string };
}

/** What a witness decides with: the logs it knows, its key, the time and its state. */
export interface WitnessContext {
  /**
   * The verifier keys of the logs it witnesses; a key's name is its log's origin (several keys of one origin:
   * a log whose key was rotated, each accepted).
   */
  readonly logKeys: readonly NoteVerifier[];
  readonly witness: NoteSigner;
  /** The cosignature's time, unix seconds. */
  readonly time: number;
  /** The latest checkpoint it cosigned for an origin (undefined: none yet). */
  readonly last: (origin: string) => string | undefined;
}

const text = (status: WitnessAnswer['status'], body: string): WitnessAnswer => ({
  status,
  contentType: 'text/plain; charset=utf-8',
  body: `${body}\n`,
});
const conflict = (size: number): WitnessAnswer => ({
  status: 409,
  contentType: SIZE_CONTENT_TYPE,
  body: formatSizeAnswer(size),
});

/** The note without the signature lines of `signer` (the text and every other signature kept). */
function withoutOwnLines(note: string, signer: NoteSigner): string {
  const parsed = parseNote(note);
  if (!parsed.ok) return note;
  const mine = keyHash(signer.name, verifierOf(signer).publicKey, signer.type ?? ED25519);
  const lines = note.slice(parsed.text.length + 1, -1).split('\n');
  const kept = lines.filter(
    (_, i) => !(parsed.signatures[i]!.name === signer.name && parsed.signatures[i]!.keyHash === mine),
  );
  return `${parsed.text}\n${kept.map((l) => `${l}\n`).join('')}`;
}

/**
 * Decides a C2SP tlog-witness add-checkpoint request, in the spec's order: 400 a malformed body or
 * an `old` past the checkpoint, 404 an origin it does not witness, 403 no valid signature of the log's
 * key, 409 (with its size) an `old` that is not the size it last cosigned or the same size with another
 * root, 422 a consistency proof that does not hold (a forked tree); otherwise 200 with its cosignature.
 * Pure: the caller persists `save` before it answers, one request at a time.
 */
export function answerAddCheckpoint(body: string, ctx: WitnessContext): WitnessAnswer {
  const parsed = parseAddCheckpoint(body);
  if (!parsed.ok) return text(400, parsed.error);
  const { old, proof, note } = parsed.request;
  const origin = note.slice(0, note.indexOf('\n'));
  const logKey = ctx.logKeys.filter((k) => k.name === origin);
  if (logKey.length === 0) return text(404, `unknown log origin ${origin.slice(0, 256)}`);
  const noteShape = parseNote(note);
  if (!noteShape.ok) return text(400, noteShape.error);
  if (!parseCheckpoint(noteShape.text).ok) return text(400, 'not a checkpoint');
  const next = openCheckpoint(note, logKey);
  if (!next.ok) return text(403, next.reason);
  const size = next.checkpoint.size;
  if (old > size) return text(400, `old size ${old} is past the checkpoint's size ${size}`);
  const last = ctx.last(origin);
  const prev = last === undefined ? undefined : openCheckpoint(last, logKey);
  if (prev && !prev.ok) throw new Error(`the witness state of ${origin} does not open: ${prev.reason}`);
  const stored = prev?.checkpoint.size ?? 0;
  if (old !== stored) return conflict(stored);
  if (prev && stored === size && !Buffer.from(prev.checkpoint.root).equals(Buffer.from(next.checkpoint.root)))
    return conflict(stored);
  const bare = withoutOwnLines(note, ctx.witness);
  const r = cosignCheckpoint({
    note: bare,
    logKey,
    witness: ctx.witness,
    time: ctx.time,
    ...(last !== undefined ? { last } : {}),
    proof,
  });
  if (!r.ok) return text(422, r.reason);
  return {
    status: 200,
    contentType: 'text/plain; charset=utf-8',
    body: r.note.slice(bare.length),
    save: { origin, note: r.note },
  };
}
