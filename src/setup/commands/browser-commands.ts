import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import { openRecovery } from '../projections/recovery.js';

/** Who the browser is, from its authenticated context (never from a body). */
export interface BrowserIdentity {
  readonly tenantId: string;
  readonly userId: string;
}

/** Records a sign-in: the cookie and CSRF token are stored only as hashes. */
export function decideSignIn(
  cmd: BrowserIdentity & { browserSessionHash: string; csrfHash: string; expiresAt: string },
): Decision<{ expiresAt: string }> {
  return accept([event('BrowserSignedIn', cmd)], { expiresAt: cmd.expiresAt });
}

/** Records a sign-out. */
export function decideSignOut(browserSessionHash: string): Decision<null> {
  return accept([event('BrowserSignedOut', { browserSessionHash })], null);
}

/** Creates a setup session for the signed-in account; the route supplies the id, token hash and expiry. */
export function decideCreateSession(
  models: AuthorityModels,
  cmd: BrowserIdentity & { sessionId: string; tokenHash: string; expiresAt: string },
): Decision<{ sessionId: string; expiresAt: string }> {
  const s = models.sessions;
  if (s.byId[cmd.sessionId] || s.bySetupToken[cmd.tokenHash])
    return reject('conflict', 'session id or token collision; retry');
  return accept(
    [
      event('SetupSessionCreated', {
        sessionId: cmd.sessionId,
        tenantId: cmd.tenantId,
        userId: cmd.userId,
        tokenHash: cmd.tokenHash,
        expiresAt: cmd.expiresAt,
      }),
    ],
    { sessionId: cmd.sessionId, expiresAt: cmd.expiresAt },
  );
}

/** Reveals the open recovery token of a deployment to its own tenant (another tenant's is a 404). */
export function decideRevealRecovery(
  models: AuthorityModels,
  cmd: BrowserIdentity & { deploymentId: string },
): Decision<{ recoveryId: string; ciphertext: string; keyId: string }> {
  const d = models.deployments.byId[cmd.deploymentId];
  if (!d || d.tenantId !== cmd.tenantId) return reject('not_found', `no deployment ${cmd.deploymentId}`);
  const open = openRecovery(models.recovery, d.recoveryIds);
  if (!open) return reject('conflict', `deployment ${d.id} has no open recovery`);
  return accept(
    [
      event('RecoveryTokenRevealed', {
        deploymentId: d.id,
        recoveryId: open.id,
        tenantId: cmd.tenantId,
        userId: cmd.userId,
      }),
    ],
    { recoveryId: open.id, ciphertext: open.ciphertext, keyId: open.keyId },
  );
}
