/**
 * The wire forms of C2SP tlog-witness (https://c2sp.org/tlog-witness), both sides: the body of
 * `POST <prefix>/add-checkpoint` (`old <size>`, the consistency proof, a blank line, the checkpoint
 * note), a 409's `text/x.tlog.size` answer and a 200's cosignature lines. Pure: no I/O.
 */

/** The path of the one tlog-witness call, after the witness's submission prefix. */
export const ADD_CHECKPOINT_PATH = '/add-checkpoint';
/** The content type of a 409's body: the witness's latest cosigned size. */
export const SIZE_CONTENT_TYPE = 'text/x.tlog.size';
/** The spec's bound on consistency proof lines (a proof over 2^63 leaves needs no more). */
export const MAX_PROOF_LINES = 63;
/** The largest request body either side handles: a checkpoint of up to 100 signatures and a full proof. */
export const MAX_REQUEST_BYTES = 64 * 1024;
/** The largest answer the instance reads from a witness (a few cosignature lines, or a size). */
export const MAX_ANSWER_BYTES = 16 * 1024;

/** What an add-checkpoint request carries. */
export interface AddCheckpoint {
  /** The size of the checkpoint the witness last cosigned, as the client believes it (0: none). */
  readonly old: number;
  /** Base64 hashes of the RFC 6962 consistency proof from `old` to the checkpoint's size. */
  readonly proof: readonly string[];
  /** The signed checkpoint note. */
  readonly note: string;
}

const SIZE = /^(0|[1-9]\d{0,15})$/;
const HASH = /^[A-Za-z0-9+/]{43}=$/;

/** A decimal tree size without leading zeroes, within the safe integers; undefined otherwise. */
export function parseSize(text: string): number | undefined {
  if (!SIZE.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** The request body: `old <size>\n`, one base64 hash a line, a blank line, the checkpoint note. */
export function formatAddCheckpoint(r: AddCheckpoint): string {
  return `old ${r.old}\n${r.proof.map((h) => `${h}\n`).join('')}\n${r.note}`;
}

/** Parses a request body, or says why it is malformed (the witness answers that 400). */
export function parseAddCheckpoint(body: string): { ok: true; request: AddCheckpoint } | { ok: false; error: string } {
  if (body.length > MAX_REQUEST_BYTES) return { ok: false, error: 'request body too large' };
  const blank = body.indexOf('\n\n');
  if (blank < 0) return { ok: false, error: 'no blank line between the proof and the checkpoint' };
  const [first, ...proof] = body.slice(0, blank).split('\n');
  const old = first?.startsWith('old ') ? parseSize(first.slice(4)) : undefined;
  if (old === undefined) return { ok: false, error: 'the first line must be `old <size>`' };
  if (proof.length > MAX_PROOF_LINES) return { ok: false, error: `more than ${MAX_PROOF_LINES} proof lines` };
  const bad = proof.findIndex((h) => !HASH.test(h));
  if (bad >= 0) return { ok: false, error: `proof line ${bad + 1} is not a base64 SHA-256 hash` };
  if (old === 0 && proof.length > 0) return { ok: false, error: 'the proof must be empty when old is 0' };
  const note = body.slice(blank + 2);
  if (note.length === 0 || !note.endsWith('\n')) return { ok: false, error: 'no checkpoint note after the blank line' };
  return { ok: true, request: { old, proof, note } };
}

/** The body of a 409: the witness's latest cosigned size and a newline. */
export function formatSizeAnswer(size: number): string {
  return `${size}\n`;
}

/** The size a 409 names, or undefined when its body is not one decimal size and a newline. */
export function parseSizeAnswer(body: string): number | undefined {
  return body.endsWith('\n') ? parseSize(body.slice(0, -1)) : undefined;
}

/** The lines of a 200's body: one or more note signature lines (`— name base64`), each ending in a newline. */
export function cosignatureLines(body: string): string[] | undefined {
  if (body.length === 0 || !body.endsWith('\n')) return undefined;
  const lines = body.slice(0, -1).split('\n');
  return lines.every((l) => /^\u2014 \S+ [A-Za-z0-9+/]+={0,2}$/u.test(l)) ? lines : undefined;
}

/** The checkpoint with a witness's answer lines appended: what a note verifier checks them against. */
export function withCosignatures(note: string, lines: readonly string[]): string {
  return `${note}${lines.map((l) => `${l}\n`).join('')}`;
}
