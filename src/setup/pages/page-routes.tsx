import { randomBytes } from 'node:crypto';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { readBodyBytes } from '../../http/body.js';
import { HttpError, sendError } from '../../http/errors.js';
import { CSRF_FIELD, createCsrf, csrfGuard, sameOrigin } from '../../web/csrf.js';
import { sendPage } from '../../web/layout.js';
import { pageHeaders } from '../../web/security.js';
import { registerAssets } from '../../web/static-assets.js';
import { createSetupSession, endBrowserSession, revealRecoveryToken, startBrowserSession } from '../browser-actions.js';
import { assertSameOrigin, browserOf } from '../browser-auth.js';
import type { AuthorityDeps, AuthorityEnv, BrowserContext } from '../env.js';
import { deploymentsOf } from '../models.js';
import type { SignInThrottle } from '../sign-in-throttle.js';
import { sessionOfTenant } from '../status-view.js';
import { installerCommand } from './installer-command.js';
import { OverviewPage } from './overview-page.js';
import { overviewData, sessionPageData } from './page-data.js';
import { SessionLive } from './session-live.js';
import { SessionPage } from './session-page.js';
import type { SetupUser } from './shell.js';
import { SignInPage } from './sign-in-page.js';
import { RecoveryTokenPage, SessionCreatedPage } from './token-pages.js';

/** The largest form body a page posts (a token and a CSRF token fit many times over). */
const FORM_LIMIT = 8192;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The cookie the sign-in form's CSRF token is bound to before any session exists. */
const PRE_SESSION_COOKIE = 'vigil-setup-sign-in';

/** Where to go after signing in: a path of this authority, never another site. */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]{0,1023}$/.test(next) && !next.startsWith('/sign-') ? next : '/';
}

/** The browser's pre-session value (set on the sign-in page). */
function preSession(c: Context, secure: boolean): string {
  const existing = getCookie(c, PRE_SESSION_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{22}$/.test(existing)) return existing;
  const fresh = randomBytes(16).toString('base64url');
  setCookie(c, PRE_SESSION_COOKIE, fresh, { path: '/sign-in', httpOnly: true, sameSite: 'Strict', secure, maxAge: 3600 });
  return fresh;
}

/** Reads a form body (`application/x-www-form-urlencoded`, bounded, valid UTF-8). */
async function readForm(c: Context): Promise<URLSearchParams> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header('content-type') ?? '')) throw new HttpError(415, 'expected a form (application/x-www-form-urlencoded)');
  try {
    return new URLSearchParams(utf8.decode(await readBodyBytes(c, FORM_LIMIT)));
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, 'form body is not valid UTF-8');
  }
}

/**
 * The setup authority's pages (server-rendered; the shared ES module refreshes the live region):
 * sign-in, the overview, creating a session (its token shown once), a session's live progress, and
 * revealing a recovery token. Forms need the same origin and the session's CSRF token.
 */
export function pageRoutes(app: Hono<AuthorityEnv>, deps: AuthorityDeps, throttle: SignInThrottle): void {
  // Form tokens are an HMAC of the browser session under a key of this process: nothing stored, a restart voids them.
  const csrf = createCsrf(randomBytes(32));
  const headers = pageHeaders();
  const userOf = (b: BrowserContext): SetupUser => ({ name: deps.accounts.find(b.tenantId, b.userId)?.displayName ?? b.userId, tenantId: b.tenantId, csrf: csrf.tokenFor(b.sessionHash) });
  const overTls = () => deps.publicUrl().startsWith('https://');
  const tokenMinutes = Math.round(deps.config.sessions.setupTokenTtlSeconds / 60);

  /** A page for a signed-in browser; others are sent to the sign-in page, which brings them back. */
  const page: MiddlewareHandler<AuthorityEnv> = async (c, next) => {
    const b = browserOf(c, deps);
    if (!b) return c.redirect(c.req.path === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(c.req.path)}`, 303);
    c.set('browser', b);
    await next();
  };
  /** A form post of a signed-in browser: the authority's public origin, then the shared guard (same origin, bounded body, the session's CSRF token). */
  const signedInForm: MiddlewareHandler<AuthorityEnv> = async (c, next) => {
    const b = browserOf(c, deps);
    if (!b) throw new HttpError(401, 'sign in first: no valid browser session');
    assertSameOrigin(c, deps);
    c.set('browser', b);
    await next();
  };
  const guard = csrfGuard<AuthorityEnv>(csrf, (c) => c.get('browser').sessionHash, (c, status, message) => sendError(c, new HttpError(status, message)));
  const form = [signedInForm, guard] as const;

  registerAssets(app);

  app.get('/sign-in', headers, (c) => {
    const next = safeNext(c.req.query('next'));
    if (browserOf(c, deps)) return c.redirect(next, 303);
    return sendPage(c, <SignInPage next={next} csrf={csrf.tokenFor(`sign-in:${preSession(c, overTls())}`)} />);
  });

  // Before a session exists the form's token is bound to a pre-session cookie (login CSRF), besides the origin checks.
  app.post('/sign-in', headers, async (c) => {
    if (!sameOrigin(c)) throw new HttpError(403, 'cross-site request refused');
    assertSameOrigin(c, deps);
    const form = await readForm(c);
    const next = safeNext(form.get('next'));
    const pre = getCookie(c, PRE_SESSION_COOKIE);
    const again = (status: 401 | 403 | 429, error: string) => sendPage(c, <SignInPage next={next} error={error} csrf={csrf.tokenFor(`sign-in:${preSession(c, overTls())}`)} />, status);
    const wait = throttle.waitSeconds(c);
    if (wait > 0) {
      c.header('Retry-After', String(wait));
      return again(429, `Too many failed sign-ins from this address: try again in ${wait} s.`);
    }
    if (pre === undefined || !csrf.verify(`sign-in:${pre}`, form.get(CSRF_FIELD) ?? undefined)) return again(403, 'The sign-in form expired: try again.');
    const token = form.get('token')?.trim() ?? '';
    const account = /^lsa_[A-Za-z0-9_-]{43}$/.test(token) ? deps.accounts.authenticate(token) : undefined;
    if (!account) {
      throttle.failed(c);
      return again(401, 'Unknown or disabled account token.');
    }
    await startBrowserSession(c, deps, account);
    return c.redirect(next, 303);
  });

  app.post('/sign-out', headers, ...form, async (c) => {
    await endBrowserSession(c, deps, c.get('browser'));
    return c.redirect('/sign-in', 303);
  });

  app.get('/', headers, page, (c) => {
    const b = c.get('browser');
    return sendPage(c, <OverviewPage user={userOf(b)} data={overviewData(deps.writer.models, b.tenantId)} tokenTtlMinutes={tokenMinutes} />);
  });

  app.post('/setup-sessions', headers, ...form, async (c) => {
    const b = c.get('browser');
    const created = await createSetupSession(c, deps, b);
    const progress = sessionPageData(deps.writer.models, sessionOfTenant(deps.writer.models, b.tenantId, created.sessionId));
    return sendPage(c, <SessionCreatedPage user={userOf(b)} {...created} command={installerCommand(deps.publicUrl(), 'setup')} progress={progress} now={deps.now().toISOString()} />);
  });

  app.get('/setup-sessions/:id', headers, page, (c) => {
    const b = c.get('browser');
    const view = sessionOfTenant(deps.writer.models, b.tenantId, c.req.param('id'));
    return sendPage(c, <SessionPage user={userOf(b)} data={sessionPageData(deps.writer.models, view)} now={deps.now().toISOString()} />);
  });

  // The live region alone, for the ES module: the same component the page renders.
  app.get('/setup-sessions/:id/live', headers, (c) => {
    const b = browserOf(c, deps);
    if (!b) throw new HttpError(401, 'sign in first: no valid browser session');
    const view = sessionOfTenant(deps.writer.models, b.tenantId, c.req.param('id'));
    return c.html(String(<SessionLive data={sessionPageData(deps.writer.models, view)} now={deps.now().toISOString()} csrf={userOf(b).csrf} />));
  });

  app.post('/deployments/:id/recovery-token', headers, ...form, async (c) => {
    if ((await c.req.parseBody()).confirm !== 'reveal') throw new HttpError(400, 'confirm first: tick the box that says you are about to reinstall the central VM');
    const b = c.get('browser');
    const deploymentId = c.req.param('id');
    const r = await revealRecoveryToken(c, deps, b, deploymentId);
    const sessionId = deploymentsOf(deps.writer.models).byId[deploymentId]!.firstSessionId;
    return sendPage(c, <RecoveryTokenPage user={userOf(b)} deploymentId={deploymentId} sessionId={sessionId} recoveryId={r.recoveryId} token={r.token} command={installerCommand(deps.publicUrl(), 'recovery')} />);
  });
}
