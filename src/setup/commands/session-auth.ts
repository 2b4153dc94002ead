import { reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { digestsEqual } from '../../auth/tokens.js';
import type { SessionView } from '../projections/setup-sessions.js';

const BAD_SESSION_TOKEN = 'missing, invalid or expired session token';

/**
 * The claimed session a session token (by hash) opens, or a rejection. An unknown session and a
 * wrong token are indistinguishable (401); so is a session of another deployment.
 */
export function authorizeSession(
  models: AuthorityModels,
  sessionId: string,
  sessionTokenHash: string,
  now: string,
): SessionView | Decision<never> {
  const view = models.sessions.byId[sessionId];
  if (!view?.sessionTokenHash || !digestsEqual(view.sessionTokenHash, sessionTokenHash))
    return reject('unauthenticated', BAD_SESSION_TOKEN);
  if (view.sessionTokenExpiresAt !== undefined && view.sessionTokenExpiresAt <= now)
    return reject('unauthenticated', BAD_SESSION_TOKEN);
  return view;
}

/** Whether `authorizeSession` returned a rejection. */
export function isDecision(x: SessionView | Decision<never>): x is Decision<never> {
  return 'ok' in x;
}
