import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { generateKeyPair, pkcs8PemFromSeed, publicKeyOf, seedFromPkcs8Pem } from '../../kernel/ed25519.js';
import { renameKeepingOwner } from '../../kernel/owned-files.js';
import { ensurePrivateDir, writeDurable } from './state-files.js';

/** Where the agent keeps its private key. */
export const keyPath = (stateDir: string) => join(stateDir, 'key.pem');

/** The agent's signing key. */
export interface AgentKey {
  readonly seed: Uint8Array;
  readonly publicKey: Uint8Array;
}

/** Generates a new key and stores it as pending (PKCS#8 PEM, 0600 in a 0700 directory); the current key stays. */
export function createPendingKey(stateDir: string): AgentKey {
  ensurePrivateDir(stateDir);
  const { seed, publicKey } = generateKeyPair();
  writeDurable(`${keyPath(stateDir)}.pending`, pkcs8PemFromSeed(seed));
  return { seed, publicKey };
}

/** Makes the pending key the current one (after the server accepted it). */
export function promotePendingKey(stateDir: string): void {
  renameKeepingOwner(`${keyPath(stateDir)}.pending`, keyPath(stateDir));
}

/** Loads the key, refusing a key file that group or others can read. */
export function loadKey(stateDir: string): AgentKey {
  const path = keyPath(stateDir);
  if (!existsSync(path)) throw new Error(`no key at ${path}; run vigil collector enroll first`);
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0)
    throw new Error(`${path} is readable by group or others; run: chmod 600 ${path}`);
  const seed = seedFromPkcs8Pem(readFileSync(path, 'utf8'));
  if (!seed) throw new Error(`${path} is not an Ed25519 PKCS#8 private key`);
  return { seed, publicKey: publicKeyOf(seed) };
}
