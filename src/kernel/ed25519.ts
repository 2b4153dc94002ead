import {
  createHash,
  createPrivateKey,
  createPublicKey,
  sign as signNative,
  verify as verifyNative,
  type KeyObject,
} from 'node:crypto';
import * as ed from '@noble/ed25519';
import { decodeStrictBase64 } from './strict-base64.js';

// The synchronous API needs SHA-512; Node's native hash is the fast, audited one.
ed.hashes.sha512 = (message) => new Uint8Array(createHash('sha512').update(message).digest());

/** DER prefix of an Ed25519 SubjectPublicKeyInfo (RFC 8410): SEQUENCE, AlgorithmIdentifier id-Ed25519, BIT STRING. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** DER prefix of an Ed25519 PKCS#8 PrivateKeyInfo (RFC 8410) holding the 32-byte seed. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const PEM = (label: string) =>
  new RegExp(`^-----BEGIN ${label}-----\\r?\\n((?:[A-Za-z0-9+/=]{1,76}\\r?\\n){1,4})-----END ${label}-----\\r?\\n?$`);

function pemBody(pem: string, label: string, maxBytes: number): Uint8Array | undefined {
  if (pem.length > 1024) return undefined;
  const m = PEM(label).exec(pem);
  return m ? decodeStrictBase64(m[1]!.replace(/\r?\n/g, ''), maxBytes) : undefined;
}

function pem(label: string, der: Uint8Array): string {
  return `-----BEGIN ${label}-----\n${Buffer.from(der).toString('base64')}\n-----END ${label}-----\n`;
}

/**
 * Why raw public-key bytes are unusable, or undefined: not 32 bytes, not a canonical curve point
 * (RFC 8032 decoding), or of small order (a key any signature can satisfy under cofactored checks).
 */
export function publicKeyProblem(key: Uint8Array): string | undefined {
  if (key.byteLength !== 32) return 'expected a 32-byte Ed25519 public key';
  let point: ed.Point;
  try {
    point = ed.Point.fromBytes(key, false);
  } catch {
    return 'not a valid Ed25519 point encoding';
  }
  return point.isSmallOrder() ? 'small-order public keys are refused' : undefined;
}

/** Reads an Ed25519 SPKI PEM public key to its 32 raw bytes, or says what is wrong. */
export function publicKeyFromSpkiPem(text: string): { ok: true; key: Uint8Array } | { ok: false; error: string } {
  const der = pemBody(text, 'PUBLIC KEY', 64);
  if (!der || der.byteLength !== 44 || !Buffer.from(der.subarray(0, 12)).equals(SPKI_PREFIX)) {
    return { ok: false, error: 'expected an Ed25519 public key as SPKI PEM (-----BEGIN PUBLIC KEY-----)' };
  }
  const key = der.slice(12);
  const problem = publicKeyProblem(key);
  return problem ? { ok: false, error: problem } : { ok: true, key };
}

/** The SPKI PEM text of raw public-key bytes. */
export function spkiPemFromPublicKey(key: Uint8Array): string {
  return pem('PUBLIC KEY', Buffer.concat([SPKI_PREFIX, key]));
}

/** The PKCS#8 PEM text of a 32-byte secret seed (readable by OpenSSL). */
export function pkcs8PemFromSeed(seed: Uint8Array): string {
  return pem('PRIVATE KEY', Buffer.concat([PKCS8_PREFIX, seed]));
}

/** The 32-byte seed of an Ed25519 PKCS#8 PEM private key, or undefined. */
export function seedFromPkcs8Pem(text: string): Uint8Array | undefined {
  const der = pemBody(text, 'PRIVATE KEY', 64);
  if (!der || der.byteLength !== 48 || !Buffer.from(der.subarray(0, 16)).equals(PKCS8_PREFIX)) return undefined;
  return der.slice(16);
}

/** A new key pair (seed from the platform CSPRNG). */
export function generateKeyPair(): { seed: Uint8Array; publicKey: Uint8Array } {
  const { secretKey, publicKey } = ed.keygen();
  return { seed: secretKey, publicKey };
}

/** The public key of a seed. */
export function publicKeyOf(seed: Uint8Array): Uint8Array {
  return ed.getPublicKey(seed);
}

/**
 * A signer of one seed through Node's crypto (OpenSSL): the same deterministic RFC 8032 signatures as
 * `sign`, about ten times faster, for a key that signs on every commit (the log's head signer).
 */
export function seedSigner(seed: Uint8Array): (message: Uint8Array) => Uint8Array {
  const key = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return (message) => new Uint8Array(signNative(null, message, key));
}

/** Signs `message` with a 32-byte seed (deterministic, RFC 8032). */
export function sign(message: Uint8Array, seed: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

/**
 * Public keys already judged, as key objects (undefined: refused), so repeated verifications skip the curve decoding.
 */
const judgedKeys = new Map<string, KeyObject | undefined>();
const MAX_JUDGED_KEYS = 4096;

function keyObjectOf(publicKey: Uint8Array): KeyObject | undefined {
  const id = Buffer.from(publicKey).toString('latin1');
  if (judgedKeys.has(id)) return judgedKeys.get(id);
  const key =
    publicKeyProblem(publicKey) === undefined
      ? createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' })
      : undefined;
  if (judgedKeys.size >= MAX_JUDGED_KEYS) judgedKeys.clear();
  judgedKeys.set(id, key);
  return key;
}

/** The group order L of Ed25519, little-endian, for the `s < L` check. */
const L_LE = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex');

/** Whether the little-endian scalar s (32 bytes) is below L. */
function scalarBelowOrder(s: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) if (s[i] !== L_LE[i]) return s[i]! < L_LE[i]!;
  return false;
}

/**
 * Verifies strictly (RFC 8032 / FIPS 186-5, not ZIP-215): the public key is a canonical encoding
 * of a point not of small order (noble's strict decoding, remembered per key), `s < L`, and R
 * canonical; the equation is OpenSSL's (Node's crypto), cofactorless, which compares the encoding
 * of the computed R with the given one, so a non-canonical R never matches. Never throws:
 * malformed input is simply not a valid signature.
 */
export function verify(signature: Uint8Array, message: Uint8Array, publicKey: Uint8Array): boolean {
  if (signature.byteLength !== 64 || publicKey.byteLength !== 32) return false;
  if (!scalarBelowOrder(signature.subarray(32))) return false;
  const key = keyObjectOf(publicKey);
  if (key === undefined) return false;
  try {
    return verifyNative(null, message, key, signature);
  } catch {
    return false;
  }
}

/** SHA-256 hex of a public key: how logs and status name a key. */
export function keyFingerprint(publicKey: Uint8Array): string {
  return createHash('sha256').update(publicKey).digest('hex');
}
