import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import { digestsEqual, hashToken } from '../auth/tokens.js';
import { HttpError } from '../http/errors.js';
import type { AuthorityDeps, AuthorityEnv, BrowserContext } from './env.js';

/** The header that carries the CSRF token on state-changing browser requests. */
export const CSRF_HEADER = 'x-csrf-token';

/** The session cookie's name: `__Host-` prefixed when the authority is served over HTTPS. */
export function cookieName(deps: AuthorityDeps): string {
  return deps.publicUrl().startsWith('https://') ? '__Host-vigil-setup' : 'vigil-setup';
}

/**
 * Refuses a request whose Origin (or Sec-Fetch-Site) shows it came from another site. An
 * `Origin: null` (a form posted under a no-referrer policy, a privacy context) passes only when the
 * browser's own `Sec-Fetch-Site: same-origin` vouches for it.
 */
export function assertSameOrigin(c: Context, deps: AuthorityDeps): void {
  const refused = new HttpError(403, 'cross-site request refused');
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw refused;
  const origin = c.req.header('origin');
  if (origin === 'null' ? site === undefined : origin !== undefined && origin !== new URL(deps.publicUrl()).origin)
    throw refused;
}

/** The signed-in browser of a request (session cookie of an enabled account, unexpired), or undefined. */
export function browserOf(c: Context, deps: AuthorityDeps): BrowserContext | undefined {
  const value = getCookie(c, cookieName(deps));
  if (value === undefined || !/^lsb_[A-Za-z0-9_-]{43}$/.test(value)) return undefined;
  const sessionHash = hashToken(value);
  const view = deps.pipeline.models.browsers.byHash[sessionHash];
  if (!view || view.expiresAt <= deps.now().toISOString() || !deps.accounts.find(view.tenantId, view.userId))
    return undefined;
  return { tenantId: view.tenantId, userId: view.userId, sessionHash, csrfHash: view.csrfHash };
}

/** Requires a signed-in browser (session cookie of an enabled account); 401 otherwise. */
export function requireBrowser(deps: AuthorityDeps): MiddlewareHandler<AuthorityEnv> {
  return async (c, next) => {
    const browser = browserOf(c, deps);
    if (!browser) throw new HttpError(401, 'sign in first: no valid browser session');
    c.set('browser', browser);
    await next();
  };
}

/** Protects a state-changing browser request: same origin, and the session's CSRF token in `X-CSRF-Token`. */
export function requireCsrf(deps: AuthorityDeps): MiddlewareHandler<AuthorityEnv> {
  return async (c, next) => {
    assertSameOrigin(c, deps);
    const presented = c.req.header(CSRF_HEADER);
    if (
      presented === undefined ||
      presented.length > 128 ||
      !digestsEqual(hashToken(presented), c.get('browser').csrfHash)
    ) {
      throw new HttpError(403, `missing or wrong ${CSRF_HEADER} header`);
    }
    await next();
  };
}
