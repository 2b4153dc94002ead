import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { generateToken, hashToken } from '../auth/tokens.js';
import type { Account } from './accounts.js';
import { cookieName } from './browser-auth.js';
import { decideAbandonByBrowser, type AbandonResult } from './commands/abandon-deployment.js';
import { decideCreateSession, decideRevealRecovery, decideSignIn, decideSignOut } from './commands/browser-commands.js';
import type { AuthorityDeps, AuthorityEnv, BrowserContext } from './env.js';
import { decryptToken, recoveryAad } from './recovery-crypto.js';
import { runCommand } from './run-command.js';
import { PREFIX } from './schemas.js';

/** The actor a browser's commands are recorded under. */
export const browserActor = (b: BrowserContext) => ({
  id: `${b.tenantId}/${b.userId}`,
  authentication: 'browser-session',
});

const later = (deps: AuthorityDeps, seconds: number) => new Date(deps.now().getTime() + seconds * 1000).toISOString();

/** Records a sign-in and sets the session cookie; returns the API's CSRF token (plaintext only here) and the expiry. */
export async function startBrowserSession(
  c: Context<AuthorityEnv>,
  deps: AuthorityDeps,
  account: Account,
): Promise<{ csrfToken: string; expiresAt: string }> {
  const cookie = generateToken(PREFIX.browser);
  const csrfToken = generateToken(PREFIX.csrf);
  const expiresAt = later(deps, deps.config.sessions.browserSessionTtlSeconds);
  const identity = { tenantId: account.tenantId, userId: account.userId };
  await runCommand(
    c,
    deps,
    () =>
      decideSignIn({ ...identity, browserSessionHash: hashToken(cookie), csrfHash: hashToken(csrfToken), expiresAt }),
    { id: `${account.tenantId}/${account.userId}`, authentication: 'account-token' },
  );
  setCookie(c, cookieName(deps), cookie, {
    httpOnly: true,
    sameSite: 'Strict',
    secure: deps.publicUrl().startsWith('https://'),
    path: '/',
    maxAge: deps.config.sessions.browserSessionTtlSeconds,
  });
  return { csrfToken, expiresAt };
}

/** Records a sign-out and clears the cookie. */
export async function endBrowserSession(
  c: Context<AuthorityEnv>,
  deps: AuthorityDeps,
  b: BrowserContext,
): Promise<void> {
  await runCommand(c, deps, () => decideSignOut(b.sessionHash), browserActor(b));
  deleteCookie(c, cookieName(deps), { path: '/', secure: deps.publicUrl().startsWith('https://') });
}

/** A new setup session of the signed-in account; its token is returned here and never again. */
export interface CreatedSession {
  readonly sessionId: string;
  readonly setupToken: string;
  readonly expiresAt: string;
}

/** Creates a setup session for the browser's tenant and user (never taken from a body). */
export async function createSetupSession(
  c: Context<AuthorityEnv>,
  deps: AuthorityDeps,
  b: BrowserContext,
): Promise<CreatedSession> {
  const setupToken = generateToken(PREFIX.setup);
  const sessionId = `ss_${randomBytes(16).toString('base64url')}`;
  const expiresAt = later(deps, deps.config.sessions.setupTokenTtlSeconds);
  await runCommand(
    c,
    deps,
    (m) =>
      decideCreateSession(m, {
        tenantId: b.tenantId,
        userId: b.userId,
        sessionId,
        tokenHash: hashToken(setupToken),
        expiresAt,
      }),
    browserActor(b),
  );
  return { sessionId, setupToken, expiresAt };
}

/** Reveals (and records revealing) the open recovery token of one of the browser tenant's deployments. */
export async function revealRecoveryToken(
  c: Context<AuthorityEnv>,
  deps: AuthorityDeps,
  b: BrowserContext,
  deploymentId: string,
): Promise<{ recoveryId: string; token: string }> {
  const r = await runCommand(
    c,
    deps,
    (m) => decideRevealRecovery(m, { tenantId: b.tenantId, userId: b.userId, deploymentId }),
    browserActor(b),
  );
  return {
    recoveryId: r.recoveryId,
    token: decryptToken(deps.recoveryKey, r.ciphertext, recoveryAad(deploymentId, r.recoveryId)),
  };
}

/** Abandons one of the browser tenant's deployments, recorded with the account as principal and the reason. */
export function abandonDeployment(
  c: Context<AuthorityEnv>,
  deps: AuthorityDeps,
  b: BrowserContext,
  deploymentId: string,
  reason: string,
): Promise<AbandonResult> {
  return runCommand(
    c,
    deps,
    (m) => decideAbandonByBrowser(m, { tenantId: b.tenantId, userId: b.userId, deploymentId, reason }),
    browserActor(b),
  );
}
