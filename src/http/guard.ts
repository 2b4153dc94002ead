import type { Context, MiddlewareHandler } from 'hono';
import { allows, type Permission } from '../auth/roles.js';
import type { Principal } from '../auth/registry.js';
import { isLoopback } from '../kernel/cidr.js';
import { accessRecords } from './access-records.js';
import { FORWARDING_HEADERS, clientAddress } from './client-address.js';
import type { AppDeps, AppEnv, NetPolicy } from './env.js';
import { HttpError, sendError } from './errors.js';

/** The principal of loopback administration (`server.allowLoopbackAdmin`). */
export const LOOPBACK_ADMIN: Principal = {
  id: 'local-admin',
  roles: ['admin'],
  displayName: 'Local administrator',
  loginName: 'local-admin',
  authentication: 'loopback',
};

/**
 * The principal of an unauthenticated loopback scrape of `GET /metrics` (`server.allowLoopbackMetrics`): it may read
 * metrics only.
 */
export const LOOPBACK_METRICS: Principal = {
  id: 'local-metrics',
  roles: [],
  displayName: 'Local metrics scraper',
  loginName: 'local-metrics',
  authentication: 'loopback',
};

const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;
const UNAUTHENTICATED = 'missing, invalid, expired or disabled credentials';

/**
 * Who is calling: a bearer credential, the mesh identity of the TCP peer, loopback administration,
 * or nobody. A bearer header always wins and is checked synchronously. A peer in the mesh ranges
 * is the daemon's to name or no one: no forwarding header may stand in front of it, and a failed
 * lookup never falls back to loopback administration.
 */
function identify(
  deps: AppDeps,
  authorization: string | undefined,
  peer: string | undefined,
  forwarded: boolean,
  nowMs: number,
  raw: unknown,
): Principal | undefined | Promise<Principal | undefined> {
  if (authorization === undefined && deps.mesh && peer !== undefined && deps.mesh.covers(peer)) {
    return forwarded ? undefined : deps.mesh.identify(peer, deps.peerPortOf?.(raw));
  }
  if (authorization !== undefined) {
    const m = BEARER.exec(authorization);
    return m ? deps.registry.authenticate(m[1]!, nowMs) : undefined;
  }
  if (deps.config.server.allowLoopbackAdmin && peer !== undefined && isLoopback(peer) && !forwarded)
    return LOOPBACK_ADMIN;
  return undefined;
}

/** A loopback peer without credentials scraping metrics, when `server.allowLoopbackMetrics` allows it. */
function loopbackScraper(
  deps: AppDeps,
  permission: Permission,
  authorization: string | undefined,
  peer: string | undefined,
  forwarded: boolean,
): Principal | undefined {
  const allowed =
    permission === 'metrics:read' &&
    deps.config.server.allowLoopbackMetrics &&
    authorization === undefined &&
    !forwarded &&
    peer !== undefined &&
    isLoopback(peer);
  return allowed ? LOOPBACK_METRICS : undefined;
}

/**
 * Guards one `/api/v1` route (or console page, identified first by `session`): authenticates, refuses a request that
 * does not authenticate from an address throttled for failed authentications (429; a valid credential is never
 * refused by the throttle), answers any other failure 401 with one body, checks the permission (403), runs the
 * handler, then appends the access event and audit record of the request and waits for them to be
 * durable before the response leaves. Refusals that a flood can repeat (every failed
 * authentication but an address's first of the interval, throttled and overloaded requests) are
 * counted in `deps.refusals` instead and logged as one summary per address and interval.
 */
export function guard(
  deps: AppDeps,
  net: NetPolicy,
  route: string,
  operation: string,
  permission: Permission,
  session?: (c: Context<AppEnv>) => Promise<Principal | undefined>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const peer = deps.peerOf(c.env?.incoming);
    const forwarded = FORWARDING_HEADERS.some((h) => c.req.header(h) !== undefined) || c.env?.forwarded === true;
    const source = clientAddress(peer, c.req.header('x-forwarded-for'), net.trustedProxies);
    c.set('sourceAddress', source);
    const at = deps.now();
    // A console page (`session` given) is first identified by its session cookie, then as the API is.
    const fromSession = session && c.req.header('authorization') === undefined ? await session(c) : undefined;
    const identified =
      fromSession ?? identify(deps, c.req.header('authorization'), peer, forwarded, at.getTime(), c.env?.incoming);
    const principal =
      (identified instanceof Promise ? await identified : identified) ??
      loopbackScraper(deps, permission, c.req.header('authorization'), peer, forwarded);
    // Only what fails to authenticate is throttled: a stranger's bad tokens from an address (behind the
    // same NAT or proxy) must not lock out a valid credential there. Checking a token is one hash.
    const waitSeconds = principal ? 0 : deps.refusals.throttledFor(source, at.getTime());
    if (waitSeconds > 0) {
      deps.refusals.refused('throttled', source, route, at);
      c.res = sendError(
        c,
        new HttpError(
          429,
          'too many failed authentications from this address: retry after the number of seconds in Retry-After',
          undefined,
          { retryAfterSeconds: waitSeconds },
        ),
      );
      return;
    }
    const approved = source !== 'unknown' && net.approved.has(source);
    c.set('auditRecords', (status: number) =>
      accessRecords({
        requestId: c.get('requestId'),
        operation,
        method: c.req.method,
        route,
        status,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
        sourceAddress: source,
        approved,
        ...(principal ? { principal } : {}),
        at: deps.now().toISOString(),
        ...(c.get('auditSearch') ? { search: c.get('auditSearch') } : {}),
      }),
    );
    if (!principal) {
      c.res = sendError(c, new HttpError(401, UNAUTHENTICATED));
      c.header('WWW-Authenticate', 'Bearer');
      if (!deps.refusals.failed(source, route, at)) return;
    } else if (!(principal === LOOPBACK_METRICS || allows(principal.roles, permission))) {
      c.set('principal', principal);
      c.res = sendError(c, new HttpError(403, `principal ${principal.id} lacks the ${permission} permission`));
    } else {
      c.set('principal', principal);
      await next();
    }
    if (c.get('audited') && c.res.status < 500) return;
    if (c.res.status === 429 || c.res.status === 507) {
      deps.refusals.refused(c.res.status === 507 ? 'disk_full' : 'overloaded', source, route, at);
      return;
    }
    const records = c.get('auditRecords')(c.res.status);
    const ctx = {
      now: deps.now().toISOString(),
      ...(principal ? { actor: { id: principal.id, authentication: principal.authentication } } : {}),
    };
    const local = async () => {
      await deps.pipeline.record(records, ctx);
    };
    await (deps.recordAccess ? deps.recordAccess(records, ctx, local) : local());
  };
}
