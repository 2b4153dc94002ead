import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { Principal } from '../../auth/registry.js';
import { hashToken } from '../../auth/tokens.js';
import { decideStartConsoleSession } from '../../commands/console-session.js';
import { accessRecords } from '../access-records.js';
import { clientAddress } from '../client-address.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { CSRF_FIELD, sameOrigin, type Csrf } from '../web/csrf.js';
import { pageHeaders } from '../web/security.js';
import { pageShell, registerPages, wantsHtml, type PageRoute } from './page-route.js';
import { SignInPage } from './pages/sign-in.js';
import {
  clearSessionCookie,
  newSessionSecret,
  overTls,
  presentedSessionHash,
  setSessionCookie,
  type SessionKeeper,
} from './session.js';

const SIGN_IN_ROUTE = '/sign-in';
/** The largest sign-in form: a token and a path. */
const SIGN_IN_BYTES = 4096;
/** The cookie binding the sign-in form's CSRF token before any session exists (login CSRF). */
const PRE_SESSION_COOKIE = 'vigil-sign-in';

/** Where to go after signing in: a path of this console, never another site. */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]{0,1023}$/.test(next) && !next.startsWith('/sign-')
    ? next
    : '/';
}

/** The pre-session value of the browser (set on the sign-in page), that the sign-in form's token is bound to. */
function preSession(c: Context<AppEnv>): string {
  const existing = getCookie(c, PRE_SESSION_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{22}$/.test(existing)) return existing;
  const fresh = randomBytes(16).toString('base64url');
  setCookie(c, PRE_SESSION_COOKIE, fresh, { path: SIGN_IN_ROUTE, httpOnly: true, sameSite: 'Strict', maxAge: 3600 });
  return fresh;
}

/**
 * Registers signing in and out. Signing in verifies a pasted bearer token like the guard does (the
 * same throttling of failed attempts per address), starts a session in the log, and sets its cookie;
 * the request's access event and audit record commit with the session's start. Signing out ends the
 * session in the log and clears the cookie.
 */
export function registerSignIn(
  app: Hono<AppEnv>,
  deps: AppDeps,
  net: NetPolicy,
  csrf: Csrf,
  sessions: SessionKeeper,
): void {
  app.get(SIGN_IN_ROUTE, pageHeaders(), (c) => {
    const next = safeNext(c.req.query('next'));
    const token = csrf.tokenFor(`sign-in:${preSession(c)}`);
    return pageShell(c, deps, net, csrf, undefined, 'Sign in', <SignInPage next={next} csrf={token} />);
  });

  app.post(SIGN_IN_ROUTE, pageHeaders(), async (c) => {
    const started = performance.now();
    const at = deps.now();
    const source = clientAddress(deps.peerOf(c.env?.incoming), c.req.header('x-forwarded-for'), net.trustedProxies);
    const again = (status: 400 | 401 | 403 | 413 | 429, error: string, next = '/') =>
      !wantsHtml(c)
        ? c.json({ error }, status)
        : pageShell(
            c,
            deps,
            net,
            csrf,
            undefined,
            'Sign in',
            <SignInPage next={next} error={error} csrf={csrf.tokenFor(`sign-in:${preSession(c)}`)} />,
            status,
          );
    if (!sameOrigin(c)) return again(403, 'cross-site sign-in refused');
    if (Number(c.req.header('content-length') ?? 'NaN') > SIGN_IN_BYTES || c.req.header('content-length') === undefined)
      return again(413, 'sign-in form too large');
    const form = await c.req.parseBody();
    const next = safeNext(form['next']);
    const pre = getCookie(c, PRE_SESSION_COOKIE);
    if (
      pre === undefined ||
      !csrf.verify(`sign-in:${pre}`, typeof form[CSRF_FIELD] === 'string' ? form[CSRF_FIELD] : undefined)
    )
      return again(403, 'the sign-in form expired: try again', next);
    const token = typeof form['token'] === 'string' ? form['token'].trim() : '';
    const bearer =
      token.length > 0 && token.length <= 512 ? deps.registry.authenticate(token, at.getTime()) : undefined;
    const records = (status: number, principal?: Principal) =>
      accessRecords({
        requestId: c.get('requestId'),
        operation: 'console_sign_in',
        method: 'POST',
        route: SIGN_IN_ROUTE,
        status,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        sourceAddress: source,
        approved: source !== 'unknown' && net.approved.has(source),
        ...(principal ? { principal } : {}),
        at: deps.now().toISOString(),
      });
    if (!bearer) {
      // Only a token that fails waits: a stranger's guesses from an address must not lock a valid user out.
      const wait = deps.refusals.throttledFor(source, at.getTime());
      if (wait > 0) {
        deps.refusals.refused('throttled', source, SIGN_IN_ROUTE, at);
        c.header('Retry-After', String(wait));
        return again(429, `too many failed sign-ins from this address: try again in ${wait} s`, next);
      }
      if (deps.refusals.failed(source, SIGN_IN_ROUTE, at))
        await deps.pipeline.record(records(401), { now: deps.now().toISOString() });
      return again(401, 'that token is not valid (unknown, disabled or expired)', next);
    }
    const secret = newSessionSecret();
    const cfg = deps.config.console;
    const ctx = {
      now: at.toISOString(),
      requestId: c.get('requestId'),
      actor: { id: bearer.id, authentication: bearer.authentication },
    };
    const outcome = await deps.pipeline.dispatch({
      decide: (m) =>
        decideStartConsoleSession(
          m.consoleSessions,
          {
            sessionHash: hashToken(secret),
            principal: bearer.id,
            authentication: bearer.authentication,
            idleMinutes: cfg.sessionIdleMinutes,
            maxHours: cfg.sessionMaxHours,
            sourceAddress: source,
          },
          ctx,
        ),
      facts: () => records(303, bearer),
      ctx,
    });
    if (!outcome.ok) return again(403, outcome.rejection.message, next);
    setSessionCookie(c, overTls(c, deps, net), secret, cfg.sessionMaxHours * 3600);
    return c.redirect(next, 303);
  });

  const signOut: PageRoute = {
    method: 'post',
    path: '/sign-out',
    permission: 'principal:read',
    audit: 'console_sign_out',
    async handle(c, { principal }) {
      const tls = overTls(c, deps, net);
      const hash = presentedSessionHash(c, tls);
      if (hash !== undefined) await sessions.end({ sessionHash: hash, reason: 'signed_out' }, principal);
      clearSessionCookie(c, tls);
      return c.redirect('/sign-in?notice=Signed%20out', 303);
    },
  };
  registerPages(app, deps, net, csrf, sessions, [signOut]);
}
