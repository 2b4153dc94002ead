import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { readBodyBytes } from '../../http/body.js';
import { HttpError } from '../../http/errors.js';
import { CSRF_FIELD, sameOrigin, type Csrf } from '../../http/web/csrf.js';
import { sendPage } from '../../http/web/layout.js';
import { pageHeaders } from '../../http/web/security.js';
import { startBrowserSession } from '../browser-actions.js';
import { assertSameOrigin, browserOf } from '../browser-auth.js';
import type { AuthorityDeps, AuthorityEnv } from '../env.js';
import type { SignInThrottle } from '../sign-in-throttle.js';
import { SignInPage } from './sign-in-page.js';

/** The largest form body a page posts (a token and a CSRF token fit many times over). */
const FORM_LIMIT = 8192;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The cookie the sign-in form's CSRF token is bound to before any session exists. */
const PRE_SESSION_COOKIE = 'vigil-setup-sign-in';

/** Where to go after signing in: a path of this authority, never another site. */
function safeNext(next: unknown): string {
  return typeof next === 'string' && /^\/(?![/\\])[\x21-\x7e]{0,1023}$/.test(next) && !next.startsWith('/sign-')
    ? next
    : '/';
}

/** The browser's pre-session value (set on the sign-in page). */
function preSession(c: Context, secure: boolean): string {
  const existing = getCookie(c, PRE_SESSION_COOKIE);
  if (existing !== undefined && /^[A-Za-z0-9_-]{22}$/.test(existing)) return existing;
  const fresh = randomBytes(16).toString('base64url');
  setCookie(c, PRE_SESSION_COOKIE, fresh, {
    path: '/sign-in',
    httpOnly: true,
    sameSite: 'Strict',
    secure,
    maxAge: 3600,
  });
  return fresh;
}

/** Reads a form body (`application/x-www-form-urlencoded`, bounded, valid UTF-8). */
async function readForm(c: Context): Promise<URLSearchParams> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(c.req.header('content-type') ?? ''))
    throw new HttpError(415, 'expected a form (application/x-www-form-urlencoded)');
  try {
    return new URLSearchParams(utf8.decode(await readBodyBytes(c, FORM_LIMIT)));
  } catch (err) {
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, 'form body is not valid UTF-8');
  }
}

/**
 * Registers the sign-in page and form: the account token is posted once in the form body; the form
 * is bound to a pre-session cookie (login CSRF) besides the origin checks; failures are throttled.
 */
export function registerSignIn(
  app: Hono<AuthorityEnv>,
  deps: AuthorityDeps,
  csrf: Csrf,
  throttle: SignInThrottle,
): void {
  const headers = pageHeaders();
  const overTls = () => deps.publicUrl().startsWith('https://');
  app.get('/sign-in', headers, (c) => {
    const next = safeNext(c.req.query('next'));
    if (browserOf(c, deps)) return c.redirect(next, 303);
    return sendPage(c, <SignInPage next={next} csrf={csrf.tokenFor(`sign-in:${preSession(c, overTls())}`)} />);
  });

  app.post('/sign-in', headers, async (c) => {
    if (!sameOrigin(c)) throw new HttpError(403, 'cross-site request refused');
    assertSameOrigin(c, deps);
    const form = await readForm(c);
    const next = safeNext(form.get('next'));
    const pre = getCookie(c, PRE_SESSION_COOKIE);
    const again = (status: 401 | 403 | 429, error: string) =>
      sendPage(
        c,
        <SignInPage next={next} error={error} csrf={csrf.tokenFor(`sign-in:${preSession(c, overTls())}`)} />,
        status,
      );
    const wait = throttle.waitSeconds(c);
    if (wait > 0) {
      c.header('Retry-After', String(wait));
      return again(429, `Too many failed sign-ins from this address: try again in ${wait} s.`);
    }
    if (pre === undefined || !csrf.verify(`sign-in:${pre}`, form.get(CSRF_FIELD) ?? undefined))
      return again(403, 'The sign-in form expired: try again.');
    const token = form.get('token')?.trim() ?? '';
    const account = /^lsa_[A-Za-z0-9_-]{43}$/.test(token) ? deps.accounts.authenticate(token) : undefined;
    if (!account) {
      throttle.failed(c);
      return again(401, 'Unknown or disabled account token.');
    }
    await startBrowserSession(c, deps, account);
    return c.redirect(next, 303);
  });
}
