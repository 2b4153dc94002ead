import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The prefix of every Vigil API token, so secret scanners can recognise a leaked one. */
export const TOKEN_PREFIX = 'vgl_';
const TOKEN_SHAPE = /^vgl_[A-Za-z0-9_-]{43}$/;

/** A new API token: 256 random bits, base64url, with the `vgl_` prefix. */
export function generateToken(prefix = TOKEN_PREFIX): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

/** The lowercase SHA-256 hex digest of a token: the only form stored at rest. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Whether a presented string has the shape of a Vigil token (cheap pre-check; never a substitute for the hash). */
export function looksLikeToken(token: string): boolean {
  return TOKEN_SHAPE.test(token);
}

/** Constant-time equality of two lowercase hex digests of equal length. */
export function digestsEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}
