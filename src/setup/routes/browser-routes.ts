import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import { generateToken, hashToken } from '../../auth/tokens.js';
import { readJsonBody } from '../../http/body.js';
import { HttpError, parseOr400 } from '../../http/errors.js';
import { CSRF_HEADER, assertSameOrigin, cookieName, requireBrowser, requireCsrf } from '../browser-auth.js';
import { decideCreateSession, decideRevealRecovery, decideSignIn, decideSignOut } from '../commands/browser-commands.js';
import type { AuthorityDeps, AuthorityEnv, BrowserContext } from '../env.js';
import { sessionsOf } from '../models.js';
import { decryptToken, recoveryAad } from '../recovery-crypto.js';
import { runCommand } from '../run-command.js';
import { CreateSessionBody, PREFIX, SignInBody } from '../schemas.js';
import { SIGN_IN_CSP, SIGN_IN_PAGE } from '../sign-in-page.js';
import { sessionStatus } from '../status-view.js';

const SessionIdPattern = /^ss_[A-Za-z0-9_-]{22}$/;
const actorOf = (b: BrowserContext) => ({ id: `${b.tenantId}/${b.userId}`, authentication: 'browser-session' });
const later = (deps: AuthorityDeps, seconds: number) => new Date(deps.now().getTime() + seconds * 1000).toISOString();

/** The browser side: sign-in, setup session creation and polling, the recovery action. */
export function browserRoutes(app: Hono<AuthorityEnv>, deps: AuthorityDeps): void {
  const signedIn = requireBrowser(deps);
  const csrf = requireCsrf(deps);

  app.get('/sign-in', (c) => {
    c.header('Content-Security-Policy', SIGN_IN_CSP);
    c.header('X-Frame-Options', 'DENY');
    return c.html(SIGN_IN_PAGE);
  });

  app.post('/v1/browser-sessions', async (c) => {
    assertSameOrigin(c, deps);
    // A JSON content type cannot be sent cross-site without a CORS preflight, which this service never grants.
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? '')) throw new HttpError(415, 'expected Content-Type: application/json');
    const body = parseOr400(SignInBody, await readJsonBody(c, 4096), 'sign-in request');
    const account = deps.accounts.authenticate(body.token);
    if (!account) throw new HttpError(401, 'unknown or disabled account token');
    const cookie = generateToken(PREFIX.browser);
    const csrfToken = generateToken(PREFIX.csrf);
    const expiresAt = later(deps, deps.config.sessions.browserSessionTtlSeconds);
    await runCommand(c, deps, () => decideSignIn({ tenantId: account.tenantId, userId: account.userId, browserSessionHash: hashToken(cookie), csrfHash: hashToken(csrfToken), expiresAt }), { id: `${account.tenantId}/${account.userId}`, authentication: 'account-token' });
    setCookie(c, cookieName(deps), cookie, { httpOnly: true, sameSite: 'Strict', secure: deps.publicUrl().startsWith('https://'), path: '/', maxAge: deps.config.sessions.browserSessionTtlSeconds });
    return c.json({ tenant_id: account.tenantId, user_id: account.userId, display_name: account.displayName, csrf_token: csrfToken, csrf_header: CSRF_HEADER, expires_at: expiresAt }, 201);
  });

  app.delete('/v1/browser-sessions/current', signedIn, csrf, async (c) => {
    const b = c.get('browser');
    await runCommand(c, deps, () => decideSignOut(b.sessionHash), actorOf(b));
    deleteCookie(c, cookieName(deps), { path: '/', secure: deps.publicUrl().startsWith('https://') });
    return c.body(null, 204);
  });

  app.post('/v1/setup-sessions', signedIn, csrf, async (c) => {
    const raw = await readJsonBody(c, 4096);
    if (raw !== null && typeof raw === 'object' && ('tenant_id' in raw || 'user_id' in raw || 'tenantId' in raw || 'userId' in raw)) {
      throw new HttpError(400, 'invalid setup session request', ['(body): tenant and user come from the signed-in account; send {}']);
    }
    parseOr400(CreateSessionBody, raw, 'setup session request');
    const b = c.get('browser');
    const setupToken = generateToken(PREFIX.setup);
    const sessionId = `ss_${randomBytes(16).toString('base64url')}`;
    const expiresAt = later(deps, deps.config.sessions.setupTokenTtlSeconds);
    await runCommand(c, deps, (m) => decideCreateSession(m, { tenantId: b.tenantId, userId: b.userId, sessionId, tokenHash: hashToken(setupToken), expiresAt }), actorOf(b));
    return c.json({ session_id: sessionId, setup_token: setupToken, expires_at: expiresAt }, 201);
  });

  app.get('/v1/setup-sessions/:id', signedIn, (c) => {
    const id = c.req.param('id');
    const view = SessionIdPattern.test(id) ? sessionsOf(deps.writer.models).byId[id] : undefined;
    // Another tenant's session is indistinguishable from a missing one.
    if (!view || view.tenantId !== c.get('browser').tenantId) throw new HttpError(404, `no setup session ${id}`);
    return c.json(sessionStatus(deps.writer.models, view));
  });

  app.post('/v1/deployments/:id/recovery-token/reveal', signedIn, csrf, async (c) => {
    const b = c.get('browser');
    const deploymentId = c.req.param('id');
    const r = await runCommand(c, deps, (m) => decideRevealRecovery(m, { tenantId: b.tenantId, userId: b.userId, deploymentId }), actorOf(b));
    const token = decryptToken(deps.recoveryKey, r.ciphertext, recoveryAad(deploymentId, r.recoveryId));
    return c.json({ deployment_id: deploymentId, recovery_id: r.recoveryId, recovery_token: token });
  });
}
