import { createHash } from 'node:crypto';
import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import { parseEd25519Spki } from '../identity-key.js';
import { sessionAndDeployment } from './prove-session.js';

/**
 * The fingerprint of a fleet public key: an OpenSSH `ssh-ed25519` line gives `SHA256:<base64>` of
 * its key blob (as `ssh-keygen -l` prints it); an Ed25519 SPKI PEM gives `sha256:<hex>` of its DER.
 */
export function fleetKeyFingerprint(text: string): string | undefined {
  const ssh = /^ssh-ed25519 ([A-Za-z0-9+/]{68}) ?[\x20-\x7e]{0,128}$/.exec(text.trim());
  if (ssh) {
    const blob = Buffer.from(ssh[1]!, 'base64');
    // The blob is string "ssh-ed25519" then a 32-byte key, each with a 4-byte length.
    if (
      blob.length !== 51 ||
      blob.readUInt32BE(0) !== 11 ||
      blob.subarray(4, 15).toString() !== 'ssh-ed25519' ||
      blob.readUInt32BE(15) !== 32
    )
      return undefined;
    return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
  }
  const spki = parseEd25519Spki(text);
  return typeof spki === 'string' ? undefined : `sha256:${spki.fingerprint}`;
}

/** A bootstrap-key publication. */
export interface BootstrapKeyCommand {
  readonly sessionId: string;
  readonly sessionTokenHash: string;
  readonly now: string;
  readonly publicKey: string;
  readonly label?: string;
}

/** `bootstrap-key`: publishes the temporary restricted fleet key for visibility and audit (it grants nothing here). */
export function decideBootstrapKey(
  models: AuthorityModels,
  cmd: BootstrapKeyCommand,
): Decision<{ fingerprint: string }> {
  const found = sessionAndDeployment(models, cmd.sessionId, cmd.sessionTokenHash, cmd.now);
  if ('ok' in found) return found;
  if (found.view.status !== 'proven')
    return reject(
      'conflict',
      `the session is ${found.view.status}; the bootstrap key is published after the proof and before completion`,
    );
  const fingerprint = fleetKeyFingerprint(cmd.publicKey);
  if (!fingerprint)
    return reject('invalid', 'invalid bootstrap key', {
      issues: ['public_key: expected an OpenSSH ssh-ed25519 line or an Ed25519 SPKI PEM'],
    });
  return accept(
    [
      event('BootstrapKeyPublished', {
        sessionId: found.view.id,
        publicKeySpkiPem: cmd.publicKey.trim(),
        fingerprint,
        ...(cmd.label ? { label: cmd.label } : {}),
      }),
    ],
    { fingerprint },
  );
}
