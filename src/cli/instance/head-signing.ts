import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ensureSecretDir } from '../../kernel/secret-files.js';
import { embeddedHeadSigner, type HeadSigner } from '../../log/head-signer.js';
import { loadLogKey, loadOrCreateLogKey, logKeyPath } from '../../log/log-key.js';
import { verifierOf, type NoteVerifier } from '../../log/signed-note.js';
import { socketHeadSigner } from '../../log/signer-socket.js';
import type { Config } from '../../services/config-schema.js';

/** The file of the log's signing key for an embedded signer (docs/log.md, "Signed heads"). */
export function signerKeyFile(config: Config, env: NodeJS.ProcessEnv = process.env): string {
  if (config.log.signer.keyFile) return config.log.signer.keyFile;
  if (env.CREDENTIALS_DIRECTORY) return join(env.CREDENTIALS_DIRECTORY, 'log-signing.key');
  return join(dirname(resolve(config.storage.path)), 'keys', 'log-signing.key');
}

/** The folder of an embedded signer's state (what it last signed, its journal). */
export function signerStateDir(config: Config): string {
  return config.log.signer.stateDir ?? join(dirname(resolve(config.storage.path)), 'signer');
}

/**
 * Moves a signing key that an earlier version kept inside the store folder (`log-signing.key`) to
 * `keyFile`, outside it: whoever can write the store must not hold the key. Returns whether it moved.
 */
export function moveKeyOutOfStore(storePath: string, keyFile: string): boolean {
  const old = logKeyPath(storePath);
  if (!existsSync(old)) return false;
  if (existsSync(keyFile)) {
    if (readFileSync(old, 'utf8') !== readFileSync(keyFile, 'utf8'))
      throw new Error(
        `two log signing keys: ${old} (inside the store, from an earlier version) and ${keyFile}; keep the one ` +
          `that signed this store's checkpoints (vigil log public-key) and remove the other`,
      );
    rmSync(old);
    return true;
  }
  ensureSecretDir(keyFile);
  renameSync(old, keyFile);
  return true;
}

/**
 * The head signer `vigil serve` (and `vigil log quarantine-tail`) writes with: the `vigil signer` on
 * `log.signer.socket`, or one in this process with the key file (made at the first start).
 */
export async function openInstanceSigner(
  config: Config,
  log: (line: Record<string, unknown>) => void = () => {},
): Promise<HeadSigner> {
  const { socket, waitSeconds } = config.log.signer;
  if (socket) return socketHeadSigner(socket, waitSeconds * 1000);
  const keyFile = signerKeyFile(config);
  if (moveKeyOutOfStore(config.storage.path, keyFile))
    log({ level: 'info', msg: 'the log signing key moved out of the store folder', keyFile });
  return embeddedHeadSigner(loadOrCreateLogKey(keyFile), signerStateDir(config));
}

/**
 * The verifier key of the instance's signed heads and checkpoints, for the commands that check them
 * (`vigil log verify`, `vigil log public-key`): asked of the signer on `log.signer.socket`, else read
 * from the key file. Undefined when neither is there (before the first start, or a user who may read
 * neither).
 */
export async function instanceVerifier(config: Config): Promise<NoteVerifier | undefined> {
  const { socket } = config.log.signer;
  if (socket) {
    const signer = await socketHeadSigner(socket, 2000).catch(() => undefined);
    await signer?.close();
    return signer?.verifier;
  }
  // An earlier version's key, inside the store, until the next start moves it out.
  for (const file of [signerKeyFile(config), logKeyPath(config.storage.path)]) {
    try {
      if (existsSync(file)) return verifierOf(loadLogKey(file));
    } catch {
      return undefined;
    }
  }
  return undefined;
}
