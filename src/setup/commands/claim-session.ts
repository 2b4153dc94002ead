import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import type { Ed25519PublicKey } from '../identity-key.js';
import type { SessionView } from '../projections/setup-sessions.js';
import type { InstallationScope } from '../scope.js';

const BAD_SETUP_TOKEN = 'setup token is invalid, expired or already used';

function liveSession(models: AuthorityModels, tokenHash: string, now: string): SessionView | undefined {
  const s = models.sessions;
  const id = s.bySetupToken[tokenHash];
  const view = id === undefined ? undefined : s.byId[id];
  return view && view.expiresAt > now && (view.status === 'created' || view.status === 'connected') ? view : undefined;
}

/** `connect`: records that an installer holds a valid token; consumes nothing and releases nothing. */
export function decideConnect(
  models: AuthorityModels,
  cmd: { tokenHash: string; now: string },
): Decision<{ sessionId: string; expiresAt: string }> {
  const view = liveSession(models, cmd.tokenHash, cmd.now);
  if (!view) return reject('unauthenticated', BAD_SETUP_TOKEN);
  return accept([event('SetupSessionConnected', { sessionId: view.id })], {
    sessionId: view.id,
    expiresAt: view.expiresAt,
  });
}

/** What a claim binds; ids, the challenge and the session token hash come from the route. */
export interface ClaimCommand {
  readonly tokenHash: string;
  readonly now: string;
  readonly key: Ed25519PublicKey;
  readonly scope: InstallationScope;
  readonly deploymentId: string;
  readonly sessionTokenHash: string;
  readonly sessionTokenExpiresAt: string;
  readonly challenge: string;
}

/** `claim`: the first valid claim consumes the setup token and binds identity key and scope. */
export function decideClaim(models: AuthorityModels, cmd: ClaimCommand): Decision<{ sessionId: string }> {
  const view = liveSession(models, cmd.tokenHash, cmd.now);
  if (!view) return reject('unauthenticated', BAD_SETUP_TOKEN);
  if (view.status !== 'connected') return reject('conflict', 'the installer must connect before it claims');
  const taken = Object.values(models.deployments.byId).some(
    (d) => d.keyFingerprint === cmd.key.fingerprint || d.retiredKeys.includes(cmd.key.fingerprint),
  );
  if (taken) return reject('conflict', 'this deployment identity key is already bound; generate a new key');
  if (models.deployments.byId[cmd.deploymentId]) return reject('conflict', 'deployment id collision; retry');
  return accept(
    [
      event('SetupSessionClaimed', {
        sessionId: view.id,
        deploymentId: cmd.deploymentId,
        tenantId: view.tenantId,
        userId: view.userId,
        publicKeySpkiPem: cmd.key.pem,
        keyFingerprint: cmd.key.fingerprint,
        scope: cmd.scope,
        sessionTokenHash: cmd.sessionTokenHash,
        sessionTokenExpiresAt: cmd.sessionTokenExpiresAt,
        challenge: cmd.challenge,
      }),
    ],
    { sessionId: view.id },
  );
}
