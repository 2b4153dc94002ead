import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import type { Ed25519PublicKey } from '../identity-key.js';
import { withinScope, type InstallationScope } from '../scope.js';

/** A recovery claim; the new session's id, token hash and challenge come from the route. */
export interface RecoveryClaimCommand {
  readonly tokenHash: string;
  readonly key: Ed25519PublicKey;
  readonly scope?: InstallationScope;
  readonly sessionId: string;
  readonly sessionTokenHash: string;
  readonly sessionTokenExpiresAt: string;
  readonly challenge: string;
}

/** What a recovery claim returns besides the plaintext session token. */
export interface RecoveryClaimResult {
  readonly deploymentId: string;
  readonly scope: InstallationScope;
  readonly epoch: number;
}

/**
 * Claims a recovery token (single use) with a new deployment identity key: the deployment keeps its
 * id and approved scope (a narrower scope may be sent, a wider one is refused), its old key is
 * retired and the enrollment epoch moves on, so every remote collector must enroll again.
 */
export function decideRecoveryClaim(models: AuthorityModels, cmd: RecoveryClaimCommand): Decision<RecoveryClaimResult> {
  const recovery = models.recovery;
  const id = recovery.byTokenHash[cmd.tokenHash];
  const view = id === undefined ? undefined : recovery.byId[id];
  if (!view || view.claimedAt) return reject('unauthenticated', 'recovery token is invalid or already used');
  const d = models.deployments.byId[view.deploymentId];
  if (!d) return reject('unauthenticated', 'recovery token is invalid or already used');
  if (d.status !== 'central_missing')
    return reject('conflict', `the deployment is ${d.status}; recovery is claimed while the central VM is missing`);
  if (cmd.scope && !withinScope(cmd.scope, d.scope))
    return reject('forbidden', 'a reinstall cannot widen the approved installation scope', {
      details: { installation_scope: d.scope },
    });
  if (cmd.key.fingerprint === d.keyFingerprint || d.retiredKeys.includes(cmd.key.fingerprint))
    return reject('conflict', 'recovery needs a new deployment identity key');
  if (models.sessions.byId[cmd.sessionId]) return reject('conflict', 'session id collision; retry');
  const epoch = d.epoch + 1;
  return accept(
    [
      event('RecoveryClaimed', {
        deploymentId: d.id,
        recoveryId: view.id,
        sessionId: cmd.sessionId,
        tenantId: d.tenantId,
        userId: d.userId,
        publicKeySpkiPem: cmd.key.pem,
        keyFingerprint: cmd.key.fingerprint,
        sessionTokenHash: cmd.sessionTokenHash,
        sessionTokenExpiresAt: cmd.sessionTokenExpiresAt,
        challenge: cmd.challenge,
        epoch,
      }),
    ],
    { deploymentId: d.id, scope: d.scope, epoch },
  );
}
