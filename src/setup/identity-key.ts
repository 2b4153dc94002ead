import { createHash, createPublicKey } from 'node:crypto';
import * as ed from '@noble/ed25519';

// Synchronous SHA-512 for @noble/ed25519's sync `verify` (node:crypto gives the same digest).
ed.hashes.sha512 = (message: Uint8Array) => new Uint8Array(createHash('sha512').update(message).digest());

/** The domain of the possession proof: signed bytes are this, NUL, session id, NUL, deployment id, NUL, challenge. */
export const PROOF_DOMAIN = 'vigil-setup/possession-proof/v1';
/** The domain of a signed deployment snapshot: signed bytes are this, NUL, the payload text. */
export const SNAPSHOT_DOMAIN = 'vigil-setup/deployment-snapshot/v1';
/** The domain of a signed collector-enrollment redemption. */
export const ENROLLMENT_DOMAIN = 'vigil-setup/collector-enrollment/v1';

const PEM_MAX = 1024;

/** A parsed Ed25519 public key: its raw 32 bytes and the SHA-256 hex of its SPKI DER (the fingerprint). */
export interface Ed25519PublicKey {
  readonly raw: Uint8Array;
  readonly fingerprint: string;
  readonly pem: string;
}

/**
 * Parses an SPKI PEM that must hold an Ed25519 key; refuses other key types, trailing data,
 * invalid or small-order points; returns the reason (a string) when it refuses.
 */
export function parseEd25519Spki(pem: string): Ed25519PublicKey | string {
  if (
    pem.length > PEM_MAX ||
    !/^-----BEGIN PUBLIC KEY-----\r?\n[A-Za-z0-9+/=\r\n]+-----END PUBLIC KEY-----\r?\n?$/.test(pem)
  ) {
    return 'expected an SPKI PEM (-----BEGIN PUBLIC KEY-----)';
  }
  let der: Buffer;
  try {
    const key = createPublicKey({ key: pem, format: 'pem' });
    if (key.asymmetricKeyType !== 'ed25519')
      return `expected an Ed25519 key, got ${key.asymmetricKeyType ?? 'unknown'}`;
    der = key.export({ type: 'spki', format: 'der' });
  } catch {
    return 'not a parsable public key';
  }
  const raw = new Uint8Array(der.subarray(der.length - 32));
  try {
    if (ed.Point.fromBytes(raw, false).isSmallOrder()) return 'small-order public keys are refused';
  } catch {
    return 'not a valid Ed25519 point';
  }
  return {
    raw,
    fingerprint: createHash('sha256').update(der).digest('hex'),
    pem: pem.replace(/\r\n/g, '\n').replace(/\n?$/, '\n'),
  };
}

/** The bytes a domain-separated signature covers: domain, then each part, NUL-separated. */
export function signedBytes(domain: string, ...parts: string[]): Uint8Array {
  return new Uint8Array(Buffer.from([domain, ...parts].join('\u0000'), 'utf8'));
}

/** Strict standard base64 of exactly 64 bytes, decoded; undefined otherwise. */
export function decodeSignature(text: string): Uint8Array | undefined {
  if (text.length !== 88 || !/^[A-Za-z0-9+/]{86}==$/.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === 64 && bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
}

/** Verifies an Ed25519 signature strictly (RFC 8032, `zip215: false`); false on any malformed input. */
export function verifyStrict(signatureB64: string, message: Uint8Array, raw: Uint8Array): boolean {
  const sig = decodeSignature(signatureB64);
  if (!sig) return false;
  try {
    return ed.verify(sig, message, raw, { zip215: false });
  } catch {
    return false;
  }
}

/** The possession-proof message for a claimed session. */
export function proofMessage(sessionId: string, deploymentId: string, challenge: string): Uint8Array {
  return signedBytes(PROOF_DOMAIN, sessionId, deploymentId, challenge);
}
