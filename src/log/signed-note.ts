import { createHash } from 'node:crypto';
import { publicKeyOf, publicKeyProblem, sign, verify } from '../collector-protocol/ed25519.js';

/**
 * C2SP signed-note (https://c2sp.org/signed-note) with Ed25519 keys: text, a blank line, then
 * signature lines `— <name> <base64(key hash ‖ signature)>`; the key hash is the first four bytes
 * of SHA-256(name ‖ 0x0A ‖ 0x01 ‖ public key).
 */

const ED25519 = 0x01;
const DASH = '\u2014 ';
const MAX_NOTE = 1 << 20;
const MAX_SIGNATURES = 100;

/** A signer: the key name and the 32-byte Ed25519 seed. */
export interface NoteSigner { readonly name: string; readonly seed: Uint8Array }
/** A verifier: the key name and the 32-byte Ed25519 public key. */
export interface NoteVerifier { readonly name: string; readonly publicKey: Uint8Array }
/** One signature line, verified or not. */
export interface NoteSignature { readonly name: string; readonly keyHash: number; readonly signature: Uint8Array }

/** Whether a string may name a key: non-empty, no whitespace, no `+`. */
export function validKeyName(name: string): boolean {
  return name.length > 0 && name.length <= 256 && !/[\s+]/u.test(name);
}

/** The key hash (key ID) of an Ed25519 key under a name. */
export function keyHash(name: string, publicKey: Uint8Array): number {
  const h = createHash('sha256').update(name).update(Uint8Array.of(0x0a, ED25519)).update(publicKey).digest();
  return h.readUInt32BE(0);
}

const hex8 = (n: number) => n.toString(16).padStart(8, '0');

/** The verifier key string `name+hash+base64(0x01 ‖ public key)` an outsider is given. */
export function verifierKeyString(v: NoteVerifier): string {
  return `${v.name}+${hex8(keyHash(v.name, v.publicKey))}+${Buffer.concat([Uint8Array.of(ED25519), v.publicKey]).toString('base64')}`;
}

/** The signer key string `PRIVATE+KEY+name+hash+base64(0x01 ‖ seed)` kept in the key file. */
export function signerKeyString(s: NoteSigner): string {
  const pub = publicKeyOf(s.seed);
  return `PRIVATE+KEY+${s.name}+${hex8(keyHash(s.name, pub))}+${Buffer.concat([Uint8Array.of(ED25519), s.seed]).toString('base64')}`;
}

function keyParts(text: string, prefix: string): { name: string; hash: number; key: Uint8Array } | undefined {
  const t = text.trim();
  if (!t.startsWith(prefix)) return undefined;
  // The key's base64 may itself hold '+': split on the first two only (a name holds none).
  const rest = t.slice(prefix.length);
  const i = rest.indexOf('+');
  const j = i < 0 ? -1 : rest.indexOf('+', i + 1);
  if (j < 0) return undefined;
  const parts = [rest.slice(0, i), rest.slice(i + 1, j), rest.slice(j + 1)];
  if ( !validKeyName(parts[0]!) || !/^[0-9a-f]{8}$/.test(parts[1]!)) return undefined;
  const raw = Buffer.from(parts[2]!, 'base64');
  if (raw.byteLength !== 33 || raw[0] !== ED25519 || raw.toString('base64') !== parts[2]) return undefined;
  return { name: parts[0]!, hash: Number.parseInt(parts[1]!, 16), key: new Uint8Array(raw.subarray(1)) };
}

/** Parses a verifier key string, checking its hash; undefined when malformed. */
export function parseVerifierKey(text: string): NoteVerifier | undefined {
  const p = keyParts(text, '');
  if (!p || publicKeyProblem(p.key) || keyHash(p.name, p.key) !== p.hash) return undefined;
  return { name: p.name, publicKey: p.key };
}

/** Parses a signer key string, checking its hash against the derived public key. */
export function parseSignerKey(text: string): NoteSigner | undefined {
  const p = keyParts(text, 'PRIVATE+KEY+');
  if (!p || keyHash(p.name, publicKeyOf(p.key)) !== p.hash) return undefined;
  return { name: p.name, seed: p.key };
}

/** The verifier of a signer. */
export function verifierOf(s: NoteSigner): NoteVerifier {
  return { name: s.name, publicKey: publicKeyOf(s.seed) };
}

/** One signature line over `text` (which ends in a newline). */
export function signatureLine(text: string, signer: NoteSigner): string {
  const pub = publicKeyOf(signer.seed);
  const sig = sign(new TextEncoder().encode(text), signer.seed);
  const blob = Buffer.alloc(4 + 64);
  blob.writeUInt32BE(keyHash(signer.name, pub), 0);
  blob.set(sig, 4);
  return `${DASH}${signer.name} ${blob.toString('base64')}\n`;
}

/** Signs text into a note. */
export function signNote(text: string, signer: NoteSigner): string {
  if (!text.endsWith('\n') || text.includes('\n\n')) throw new Error('note text must end in a newline and hold no blank line');
  return `${text}\n${signatureLine(text, signer)}`;
}

/** A parsed note: its text and signature lines, or why it is malformed. */
export function parseNote(note: string): { ok: true; text: string; signatures: NoteSignature[] } | { ok: false; error: string } {
  if (note.length > MAX_NOTE) return { ok: false, error: 'note too large' };
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) return { ok: false, error: 'not a signed note (no blank line before signatures)' };
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
export function openNote(note: string, v: NoteVerifier): { ok: true; text: string; signatures: NoteSignature[] } | { ok: false; error: string } {
  const parsed = parseNote(note);
  if (!parsed.ok) return parsed;
  const hash = keyHash(v.name, v.publicKey);
  const mine = parsed.signatures.find((s) => s.name === v.name && s.keyHash === hash);
  if (!mine) return { ok: false, error: `no signature by ${v.name}` };
  if (!verify(mine.signature, new TextEncoder().encode(parsed.text), v.publicKey)) return { ok: false, error: `the signature by ${v.name} does not verify` };
  return parsed;
}
