import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { ensureSecretDir, secretFileProblem, writeSecretFile } from '../kernel/secret-files.js';

/** The AES-256-GCM key that encrypts recovery tokens at rest, and its id (first 16 hex of its SHA-256). */
export interface RecoveryKey {
  readonly key: Buffer;
  readonly id: string;
}

/**
 * Loads the owner-only recovery key file (base64 of 32 bytes), creating it on first start.
 * Refuses a file or directory that group or others can reach.
 */
export function loadRecoveryKey(path: string): RecoveryKey {
  ensureSecretDir(path);
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
  if (!existsSync(path)) writeSecretFile(path, `${randomBytes(32).toString('base64')}\n`);
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`recovery key file ${path} must hold base64 of exactly 32 bytes`);
  return { key, id: createHash('sha256').update(key).digest('hex').slice(0, 16) };
}

/** Encrypts a recovery token: `v1.<iv>.<ciphertext>.<tag>` (base64url), bound to `aad` (deployment and recovery id). */
export function encryptToken(k: RecoveryKey, token: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', k.key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ct = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), ct.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(
    '.',
  );
}

/** Decrypts what `encryptToken` produced; throws when the key, the AAD or the bytes differ. */
export function decryptToken(k: RecoveryKey, ciphertext: string, aad: string): string {
  const [version, iv, ct, tag] = ciphertext.split('.');
  if (version !== 'v1' || !iv || !ct || !tag) throw new Error('unsupported recovery ciphertext');
  const decipher = createDecipheriv('aes-256-gcm', k.key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}

/** The AAD of a recovery token's ciphertext. */
export function recoveryAad(deploymentId: string, recoveryId: string): string {
  return `vigil-recovery-token/v1\u0000${deploymentId}\u0000${recoveryId}`;
}
