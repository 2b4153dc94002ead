import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { secretFileProblem, writeSecretFile } from '../kernel/secret-files.js';
import { generateKeyPair } from '../kernel/ed25519.js';
import { parseSignerKey, signerKeyString, type NoteSigner } from './signed-note.js';

/** Where an instance keeps the key that signs its checkpoints: inside its store folder (0700). */
export function logKeyPath(storePath: string): string {
  return join(storePath, 'log-signing.key');
}

/**
 * Loads the instance's checkpoint signing key, creating it (0600, in a 0700 folder) on first use.
 * Its name is the checkpoints' origin, `vigil.log/<128 random bits in hex>`, unique per instance.
 * A key file readable by others, or not a signed-note signer key, is refused.
 */
export function loadOrCreateLogKey(path: string): NoteSigner {
  if (!existsSync(path)) {
    const name = `vigil.log/${randomBytes(16).toString('hex')}`;
    writeSecretFile(path, `${signerKeyString({ name, seed: generateKeyPair().seed })}\n`);
  }
  return loadLogKey(path);
}

/**
 * Loads the instance's checkpoint signing key, which must exist (`vigil log public-key`: a key made
 * here would be one that never signed anything, and handed to auditors as if it had).
 */
export function loadLogKey(path: string): NoteSigner {
  if (!existsSync(path))
    throw new Error(
      `no checkpoint signing key at ${path}: \`vigil serve\` makes it at its first start (if this store has served ` +
        `before, restore the key with it from a backup)`,
    );
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing the log signing key: ${problem}`);
  const signer = parseSignerKey(readFileSync(path, 'utf8'));
  if (!signer) throw new Error(`${path} is not a signed-note Ed25519 signer key (PRIVATE+KEY+name+hash+key)`);
  return signer;
}
