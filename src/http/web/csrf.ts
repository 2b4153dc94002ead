import { createHmac } from 'node:crypto';
import type { Context, Env, MiddlewareHandler } from 'hono';
import { digestsEqual } from '../../auth/tokens.js';

/** The name of the hidden form field (and of the header the ES module sends) that carries the CSRF token. */
export const CSRF_FIELD = '_csrf';
/** The header a script-driven request carries its CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';

/** Issues and checks CSRF tokens bound to one session (or principal) under a server-held key. */
export interface Csrf {
  /** The token of a binding (a session's hash, or a principal without a session): put in every form. */
  tokenFor(binding: string): string;
  /** Whether a presented token is the one of `binding` (constant time). */
  verify(binding: string, presented: string | undefined): boolean;
}

/**
 * CSRF tokens as an HMAC of the binding under `key` (random per process for the instance): nothing
 * is stored, a token from another session or principal never matches, and a restart voids them all.
 */
export function createCsrf(key: Buffer): Csrf {
  const tokenFor = (binding: string) => createHmac('sha256', key).update(`csrf\0${binding}`).digest('base64url');
  return {
    tokenFor,
    verify: (binding, presented) =>
      presented !== undefined && presented.length <= 128 && digestsEqual(tokenFor(binding), presented),
  };
}

/**
 * Whether a state-changing request came from a page of this same origin: its `Origin` (sent by
 * every current browser on a POST) names the host it was sent to, and `Sec-Fetch-Site`, when
 * present, is same-origin. A request with neither header is no browser's cross-site form and
 * still needs the token.
 */
export function sameOrigin(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin' || site === 'none';
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  const host = c.req.header('host');
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/** The largest form body a page accepts (a Sigma rule pasted into the rules page is the largest). */
export const MAX_FORM_BYTES = 256 * 1024;

/**
 * Protects a state-changing page request: refuses (403) one from another origin, one over
 * `MAX_FORM_BYTES` (413), and one without the CSRF token of `bindingOf(c)` in the `_csrf` field
 * of its form or the `X-CSRF-Token` header. `refuse` answers the refusal (a page or an ErrorResponse).
 */
export function csrfGuard<E extends Env>(
  csrf: Csrf,
  bindingOf: (c: Context<E>) => string | undefined,
  refuse: (c: Context<E>, status: 403 | 413, message: string) => Response | Promise<Response>,
): MiddlewareHandler<E> {
  return async (c, next) => {
    if (!sameOrigin(c)) return refuse(c, 403, 'cross-site request refused');
    // A body is read only with a declared length within the bound (browsers always declare it).
    if (c.req.header('transfer-encoding') !== undefined) return refuse(c, 413, 'a form body needs a Content-Length');
    const length = Number(c.req.header('content-length') ?? '0');
    if (!Number.isFinite(length) || length > MAX_FORM_BYTES)
      return refuse(c, 413, `form body over ${MAX_FORM_BYTES} bytes`);
    let presented = c.req.header(CSRF_HEADER);
    if (
      presented === undefined &&
      /^(application\/x-www-form-urlencoded|multipart\/form-data)/.test(c.req.header('content-type') ?? '')
    ) {
      const field = (await c.req.parseBody())[CSRF_FIELD];
      presented = typeof field === 'string' ? field : undefined;
    }
    const binding = bindingOf(c);
    if (binding === undefined || !csrf.verify(binding, presented))
      return refuse(c, 403, 'missing or wrong CSRF token: reload the page and try again');
    await next();
  };
}
