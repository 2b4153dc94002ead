/**
 * Key rotation notes (docs/log.md, "Rotating the signing key"): a C2SP signed note naming the log's
 * origin, the old and the new verifier key, signed by the new key and cosigned by the old one. Both
 * signatures must verify, so the note is proof that whoever held the old key handed the log to the new
 * one; a verifier that trusts either key of a checked note may trust the other (a chain of keys).
 */
import {
  ED25519,
  keyHash,
  openNote,
  parseNote,
  parseVerifierKey,
  signatureLine,
  signNote,
  verifierKeyString,
  verifierOf,
  type NoteSignature,
  type NoteSigner,
  type NoteVerifier,
} from './signed-note.js';

/** The first line of a rotation note's text. */
export const ROTATION_HEADER = 'vigil.log/key-rotation/v1';

/** A checked rotation: the log's origin and the key pair it links. */
export interface KeyRotation {
  readonly origin: string;
  readonly old: NoteVerifier;
  readonly new: NoteVerifier;
}

/** The text a rotation note signs. */
export function rotationText(origin: string, old: NoteVerifier, next: NoteVerifier): string {
  return `${ROTATION_HEADER}\n${origin}\nold ${verifierKeyString(old)}\nnew ${verifierKeyString(next)}\n`;
}

const idOf = (k: NoteVerifier) => verifierKeyString(k);

/**
 * The rotation note from `oldKey` to `newKey`: both plain Ed25519 keys named for the log's origin, with
 * different key material. Signed by the new key, cosigned by the old (Ed25519 is deterministic: the same
 * pair always gives the same note).
 */
export function makeRotation(oldKey: NoteSigner, newKey: NoteSigner): string {
  if ((oldKey.type ?? ED25519) !== ED25519 || (newKey.type ?? ED25519) !== ED25519)
    throw new Error('a log signing key is a plain Ed25519 note key');
  if (oldKey.name !== newKey.name)
    throw new Error(`the new key must keep the log's origin ${oldKey.name} as its name, not ${newKey.name}`);
  const [o, n] = [verifierOf(oldKey), verifierOf(newKey)];
  if (Buffer.from(o.publicKey).equals(Buffer.from(n.publicKey))) throw new Error('the new key is the old key');
  const text = rotationText(oldKey.name, o, n);
  return `${signNote(text, newKey)}${signatureLine(text, oldKey)}`;
}

/**
 * Checks a rotation note: its text exactly as `rotationText` writes it, both keys plain Ed25519 keys
 * named for the origin with different key hashes, and a verifying signature of each (no other lines).
 */
export function checkRotation(note: string): ({ ok: true } & KeyRotation) | { ok: false; error: string } {
  const parsed = parseNote(note);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  const lines = parsed.text.split('\n');
  if (
    lines.length !== 5 ||
    lines[0] !== ROTATION_HEADER ||
    !lines[2]!.startsWith('old ') ||
    !lines[3]!.startsWith('new ')
  )
    return { ok: false, error: `not a ${ROTATION_HEADER} note` };
  const origin = lines[1]!;
  const [old, next] = [parseVerifierKey(lines[2]!.slice(4)), parseVerifierKey(lines[3]!.slice(4))];
  if (!old || !next || old.type !== undefined || next.type !== undefined)
    return { ok: false, error: 'the rotation names a key that is not a log verifier key' };
  if (old.name !== origin || next.name !== origin)
    return { ok: false, error: `the rotation's keys are not both named for its origin ${origin}` };
  if (rotationText(origin, old, next) !== parsed.text)
    return { ok: false, error: 'the rotation text is not canonical' };
  if (keyHash(old.name, old.publicKey) === keyHash(next.name, next.publicKey))
    return { ok: false, error: 'the rotation does not change the key' };
  if (parsed.signatures.length !== 2) return { ok: false, error: 'a rotation has exactly two signatures' };
  // One encoding only: base64 with other padding bits would be another note text with the same signatures.
  if (canonical(parsed.text, parsed.signatures) !== note) return { ok: false, error: 'the note is not canonical' };
  const signedByNew = openNote(note, next);
  if (!signedByNew.ok) return { ok: false, error: `new key: ${signedByNew.error}` };
  const cosignedByOld = openNote(note, old);
  if (!cosignedByOld.ok) return { ok: false, error: `old key: ${cosignedByOld.error}` };
  return { ok: true, origin, old, new: next };
}

/** A note written back from its text and signatures, as signed-note writes it. */
function canonical(text: string, signatures: readonly NoteSignature[]): string {
  const lines = signatures.map((sig) => {
    const blob = Buffer.alloc(4 + sig.signature.byteLength);
    blob.writeUInt32BE(sig.keyHash, 0);
    blob.set(sig.signature, 4);
    return `\u2014 ${sig.name} ${blob.toString('base64')}\n`;
  });
  return `${text}\n${lines.join('')}`;
}

/**
 * The keys a verifier holding `start` accepts given rotation notes (in any order): a checked note of
 * which one key is accepted adds the other, in both directions, until nothing changes. Notes that do
 * not check, or link keys outside the chain, add nothing.
 */
export function keyChain(start: readonly NoteVerifier[], notes: readonly string[]): NoteVerifier[] {
  const keys = new Map(start.map((k) => [idOf(k), k]));
  const links = notes.map(checkRotation).filter((r) => r.ok);
  for (let grew = true; grew;) {
    grew = false;
    for (const r of links)
      for (const [have, add] of [
        [r.old, r.new],
        [r.new, r.old],
      ] as const)
        if (keys.has(idOf(have)) && !keys.has(idOf(add))) {
          keys.set(idOf(add), add);
          grew = true;
        }
  }
  return [...keys.values()];
}

/**
 * The rotations that led to `current`, oldest first: from the note whose new key is `current` back
 * through each old key. A note recorded for a key not installed yet (a rotation stopped half-way) is
 * not among them.
 */
export function rotationsTo(current: NoteVerifier, notes: readonly string[]): string[] {
  const checked = notes.map((note) => ({ note, r: checkRotation(note) }));
  const out: string[] = [];
  const seen = new Set<string>();
  for (let key = current; !seen.has(idOf(key));) {
    seen.add(idOf(key));
    const link = checked.find((c) => c.r.ok && idOf(c.r.new) === idOf(key));
    if (!link || !link.r.ok) break;
    out.unshift(link.note);
    key = link.r.old;
  }
  return out;
}

/** Opens a note with the first of `keys` whose signature line verifies. */
export function openWithAny(
  note: string,
  keys: readonly NoteVerifier[],
): ReturnType<typeof openNote> & { key?: NoteVerifier } {
  let last: ReturnType<typeof openNote> = { ok: false, error: 'no verifier key' };
  for (const key of keys) {
    last = openNote(note, key);
    if (last.ok) return { ...last, key };
  }
  return keys.length > 1 && !last.ok ? { ok: false, error: `${last.error} (nor by any key of its chain)` } : last;
}
