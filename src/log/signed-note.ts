import { createHash } from 'node:crypto';
import { publicKeyOf, publicKeyProblem, seedSigner, sign, verify } from '../kernel/ed25519.js';

/**
 * C2SP signed-note (https://c2sp.org/signed-note) with Ed25519 keys: text, a blank line, then
 * signature lines `— <name> <base64(key hash ‖ signature)>`; the key hash is the first four bytes
 * of SHA-256(name ‖ 0x0A ‖ type ‖ public key). Type 0x01 signs the note text itself (the log's
 * checkpoints); type 0x04 is a C2SP tlog-cosignature/v1 (a witness's): the signature is a
 * big-endian u64 timestamp ‖ Ed25519 over `cosignature/v1\ntime <t>\n` ‖ the note text.
 */

/** Signature type of a plain Ed25519 note signature. */
export const ED25519 = 0x01;
/** Signature type of a C2SP tlog-cosignature/v1 (timestamped Ed25519). */
export const COSIGNATURE_V1 = 0x04;
type KeyType = typeof ED25519 | typeof COSIGNATURE_V1;
const DASH = '\u2014 ';
const MAX_NOTE = 1 << 20;
const MAX_SIGNATURES = 100;

/** A signer: the key name, the 32-byte Ed25519 seed, and its signature type (0x01 when absent). */
export interface NoteSigner {
  readonly name: string;
  readonly seed: Uint8Array;
  readonly type?: KeyType;
}
/** A verifier: the key name, the 32-byte Ed25519 public key, and its signature type (0x01 when absent). */
export interface NoteVerifier {
  readonly name: string;
  readonly publicKey: Uint8Array;
  readonly type?: KeyType;
}
/** One signature line, verified or not. */
export interface NoteSignature {
  readonly name: string;
  readonly keyHash: number;
  readonly signature: Uint8Array;
}

/** Whether a string may name a key: non-empty, no whitespace, no `+`. */
export function validKeyName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !/[\s+]/u.test(name);
}

/** The key hash (key ID) of an Ed25519 key of a signature type under a name. */
export function keyHash(name: string, publicKey: Uint8Array, type: KeyType = ED25519): number {
  const h = createHash('sha256').update(name).update(Uint8Array.of(0x0a, type)).update(publicKey).digest();
  return h.readUInt32BE(0);
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** The verifier key string `name+hash+base64(type ‖ public key)` an outsider is given. */
export function verifierKeyString(v: NoteVerifier): string {
  const type = v.type ?? ED25519;
  const key = Buffer.concat([Uint8Array.of(type), v.publicKey]).toString('base64');
  return `${v.name}+${hex8(keyHash(v.name, v.publicKey, type))}+${key}`;
}

/** The signer key string `PRIVATE+KEY+name+hash+base64(type ‖ seed)` kept in the key file. */
export function signerKeyString(s: NoteSigner): string {
  const pub = publicKeyOf(s.seed);
  const type = s.type ?? ED25519;
  const seed = Buffer.concat([Uint8Array.of(type), s.seed]).toString('base64');
  return `PRIVATE+KEY+${s.name}+${hex8(keyHash(s.name, pub, type))}+${seed}`;
}

function keyParts(
  text: string,
  prefix: string,
): { name: string; hash: number; key: Uint8Array; type: KeyType } | undefined {
  const t = text.trim();
  if (!t.startsWith(prefix)) return undefined;
  // The key's base64 may itself hold '+': split on the first two only (a name holds none).
  const rest = t.slice(prefix.length);
  const i = rest.indexOf('+');
  const j = i < 0 ? -1 : rest.indexOf('+', i + 1);
  if (j < 0) return undefined;
  const parts = [rest.slice(0, i), rest.slice(i + 1, j), rest.slice(j + 1)];
  if (!validKeyName(parts[0]!) || !/^[0-9a-f]{8}$/.test(parts[1]!)) return undefined;
  const raw = Buffer.from(parts[2]!, 'base64');
  if (raw.byteLength !== 33 || (raw[0] !== ED25519 && raw[0] !== COSIGNATURE_V1) || raw.toString('base64') !== parts[2])
    return undefined;
  return {
    name: parts[0]!,
    hash: Number.parseInt(parts[1]!, 16),
    key: new Uint8Array(raw.subarray(1)),
    type: raw[0] as KeyType,
  };
}

/** Parses a verifier key string, checking its hash; undefined when malformed. */
export function parseVerifierKey(text: string): NoteVerifier | undefined {
  const p = keyParts(text, '');
  if (!p || publicKeyProblem(p.key) || keyHash(p.name, p.key, p.type) !== p.hash) return undefined;
  return { name: p.name, publicKey: p.key, ...(p.type === COSIGNATURE_V1 ? { type: p.type } : {}) };
}

/** Parses a signer key string, checking its hash against the derived public key. */
export function parseSignerKey(text: string): NoteSigner | undefined {
  const p = keyParts(text, 'PRIVATE+KEY+');
  if (!p || keyHash(p.name, publicKeyOf(p.key), p.type) !== p.hash) return undefined;
  return { name: p.name, seed: p.key, ...(p.type === COSIGNATURE_V1 ? { type: p.type } : {}) };
}

/** The verifier of a signer. */
export function verifierOf(s: NoteSigner): NoteVerifier {
  return { name: s.name, publicKey: publicKeyOf(s.seed), ...(s.type !== undefined ? { type: s.type } : {}) };
}

/** The message a tlog-cosignature/v1 at `time` (unix seconds) signs over a note's text. */
export function cosignedMessage(text: string, time: bigint): Uint8Array {
  return new TextEncoder().encode(`cosignature/v1\ntime ${time}\n${text}`);
}

/**
 * One signature line over `text` (which ends in a newline). A cosignature/v1 signer stamps it with
 * `time` (unix seconds: the caller's clock, so signing stays a pure function of its inputs).
 */
export function signatureLine(text: string, signer: NoteSigner, time?: number): string {
  const pub = publicKeyOf(signer.seed);
  const type = signer.type ?? ED25519;
  let blob: Buffer;
  if (type === COSIGNATURE_V1) {
    if (time === undefined || !Number.isSafeInteger(time) || time < 0)
      throw new Error('a cosignature needs its time in unix seconds');
    blob = Buffer.alloc(4 + 8 + 64);
    blob.writeBigUInt64BE(BigInt(time), 4);
    blob.set(sign(cosignedMessage(text, BigInt(time)), signer.seed), 12);
  } else {
    blob = Buffer.alloc(4 + 64);
    blob.set(sign(new TextEncoder().encode(text), signer.seed), 4);
  }
  blob.writeUInt32BE(keyHash(signer.name, pub, type), 0);
  return `${DASH}${signer.name} ${blob.toString('base64')}\n`;
}

/** Whether one signature of `v`'s key verifies over the note text, by the key's signature type. */
function signatureVerifies(sig: Uint8Array, text: string, v: NoteVerifier): boolean {
  if ((v.type ?? ED25519) === ED25519) return verify(sig, new TextEncoder().encode(text), v.publicKey);
  if (sig.byteLength !== 8 + 64) return false;
  const time = Buffer.from(sig.buffer, sig.byteOffset, 8).readBigUInt64BE(0);
  return time < 2n ** 63n && verify(sig.subarray(8), cosignedMessage(text, time), v.publicKey);
}

/** The time (unix seconds) a cosignature/v1 signature states. */
export function cosignatureTime(sig: Uint8Array): number | undefined {
  return sig.byteLength === 72 ? Number(Buffer.from(sig.buffer, sig.byteOffset, 8).readBigUInt64BE(0)) : undefined;
}

/**
 * Signs note texts with a plain Ed25519 key prepared once (Node's crypto, the key hash computed
 * once): what signs the log's head on every commit, where `signNote` would decode the key each time.
 */
export function preparedNoteSigner(signer: NoteSigner): (text: string) => string {
  if ((signer.type ?? ED25519) !== ED25519) throw new Error(`${signer.name} is not a plain Ed25519 note key`);
  const sign = seedSigner(signer.seed);
  const prefix = Buffer.alloc(4);
  prefix.writeUInt32BE(keyHash(signer.name, publicKeyOf(signer.seed)), 0);
  const encoder = new TextEncoder();
  return (text) => {
    if (!text.endsWith('\n') || text.includes('\n\n'))
      throw new Error('note text must end in a newline and hold no blank line');
    const blob = Buffer.concat([prefix, sign(encoder.encode(text))]);
    return `${text}\n${DASH}${signer.name} ${blob.toString('base64')}\n`;
  };
}

/** Signs text into a note. */
export function signNote(text: string, signer: NoteSigner): string {
  if (!text.endsWith('\n') || text.includes('\n\n'))
    throw new Error('note text must end in a newline and hold no blank line');
  return `${text}\n${signatureLine(text, signer)}`;
}

/** A parsed note: its text and signature lines, or why it is malformed. */
export function parseNote(
  note: string,
): { ok: true; text: string; signatures: NoteSignature[] } | { ok: false; error: string } {
  if (note.length > MAX_NOTE) return { ok: false, error: 'note too large' };
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n'))
    return { ok: false, error: 'not a signed note (no blank line before signatures)' };
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) return { ok: false, error: 'too many signatures' };
  const signatures: NoteSignature[] = [];
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/]+={0,2})$/u.exec(line);
    if (!m || !validKeyName(m[1]!)) return { ok: false, error: `malformed signature line: ${line.slice(0, 80)}` };
    const blob = Buffer.from(m[2]!, 'base64');
    if (blob.byteLength < 5) return { ok: false, error: 'signature too short' };
    signatures.push({ name: m[1]!, keyHash: blob.readUInt32BE(0), signature: new Uint8Array(blob.subarray(4)) });
  }
  return { ok: true, text, signatures };
}

/**
 * Opens a note with a verifier: ok with its text when a line of that key (name and hash) verifies;
 * a failing line of that key rejects the note (signed-note's rule), lines of other keys are ignored.
 */
export function openNote(
  note: string,
  v: NoteVerifier,
): { ok: true; text: string; signatures: NoteSignature[] } | { ok: false; error: string } {
  const parsed = parseNote(note);
  if (!parsed.ok) return parsed;
  const hash = keyHash(v.name, v.publicKey, v.type ?? ED25519);
  const mine = parsed.signatures.find((s) => s.name === v.name && s.keyHash === hash);
  if (!mine) return { ok: false, error: `no signature by ${v.name}` };
  if (!signatureVerifies(mine.signature, parsed.text, v))
    return { ok: false, error: `the signature by ${v.name} does not verify` };
  return parsed;
}
