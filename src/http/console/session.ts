import { randomBytes } from 'node:crypto';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Principal } from '../../auth/registry.js';
import { hashToken } from '../../auth/tokens.js';
import { decideEndConsoleSession, type EndConsoleSession } from '../../commands/console-session.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import type { ConsoleSessions } from '../../projections/console-sessions.js';

/** How a principal signed in through a console session is named in access and audit records and review histories. */
export const SESSION_AUTHENTICATION = 'console_session';

const SECRET_SHAPE = /^vcs_[A-Za-z0-9_-]{43}$/;

/** A new session secret (256 random bits): it lives only in the browser's cookie; the log keeps its SHA-256. */
export function newSessionSecret(): string {
  return `vcs_${randomBytes(32).toString('base64url')}`;
}

/**
 * Whether the browser reached the console over TLS: the request's own scheme, or `X-Forwarded-Proto`
 * from a trusted proxy. Decides the `__Host-` prefix and the `Secure` attribute of the cookie.
 */
export function overTls(c: Context<AppEnv>, deps: AppDeps, net: NetPolicy): boolean {
  if (new URL(c.req.url).protocol === 'https:') return true;
  const peer = deps.peerOf(c.env?.incoming);
  return peer !== undefined && net.trustedProxies.has(peer) && c.req.header('x-forwarded-proto') === 'https';
}

/** The session cookie's name: `__Host-` prefixed (Secure, host-only, path /) when served over TLS. */
export function sessionCookieName(tls: boolean): string {
  return tls ? '__Host-vigil-console' : 'vigil-console';
}

/** Sets the session cookie: HttpOnly, SameSite=Strict, path /, Secure over TLS, for the session's absolute lifetime. */
export function setSessionCookie(c: Context<AppEnv>, tls: boolean, secret: string, maxAgeSeconds: number): void {
  setCookie(c, sessionCookieName(tls), secret, {
    path: '/',
    httpOnly: true,
    sameSite: 'Strict',
    secure: tls,
    maxAge: maxAgeSeconds,
  });
}

/** Removes the session cookie from the browser. */
export function clearSessionCookie(c: Context<AppEnv>, tls: boolean): void {
  deleteCookie(c, sessionCookieName(tls), { path: '/', secure: tls, httpOnly: true, sameSite: 'Strict' });
}

/** The SHA-256 of the request's well-formed session secret, if it carries one. */
export function presentedSessionHash(c: Context<AppEnv>, tls: boolean): string | undefined {
  const value = getCookie(c, sessionCookieName(tls));
  return value !== undefined && SECRET_SHAPE.test(value) ? hashToken(value) : undefined;
}

/** Identifies console requests by their session cookie, keeping each session's last activity for the idle timeout. */
export interface SessionKeeper {
  /** The principal of the request's open session, or undefined (no cookie, ended, timed out, credential revoked). */
  identify(c: Context<AppEnv>): Promise<Principal | undefined>;
  /** Ends a session now (sign-out), recording why; false when it was not open. */
  end(cmd: EndConsoleSession, actor: Principal): Promise<boolean>;
}

/**
 * The instance's session keeper. Sessions are models of the log (started, ended); the last
 * activity is kept in memory only, so after a restart a session's idle time counts from the
 * restart (its absolute end still holds). A session found timed out, or whose credential was
 * disabled, expired or removed, is ended in the log with that reason.
 */
export function createSessionKeeper(deps: AppDeps, net: NetPolicy): SessionKeeper {
  const lastSeen = new Map<string, number>();
  const started = deps.now().getTime();
  const end = async (cmd: EndConsoleSession, actor: Pick<Principal, 'id' | 'authentication'>) => {
    lastSeen.delete(cmd.sessionHash);
    const ctx = { now: deps.now().toISOString(), actor: { id: actor.id, authentication: actor.authentication } };
    const outcome = await deps.pipeline.dispatch({
      decide: (m) => decideEndConsoleSession(m.consoleSessions, cmd),
      ctx,
    });
    return outcome.ok;
  };
  return {
    async identify(c) {
      const hash = presentedSessionHash(c, overTls(c, deps, net));
      if (hash === undefined) return undefined;
      const session = deps.reads.consoleSessions.byHash[hash];
      if (!session) return undefined;
      const now = deps.now().getTime();
      const idleSince = lastSeen.get(hash) ?? Math.max(started, Date.parse(session.startedAt));
      const principal = deps.registry.principalById(session.principal, now);
      const reason =
        Date.parse(session.expiresAt) <= now
          ? 'expired'
          : now - idleSince > session.idleMinutes * 60_000
            ? 'idle'
            : principal
              ? undefined
              : 'credential_revoked';
      if (reason !== undefined || !principal) {
        await end(
          { sessionHash: hash, reason: reason ?? 'credential_revoked' },
          { id: session.principal, authentication: SESSION_AUTHENTICATION },
        );
        return undefined;
      }
      lastSeen.set(hash, now);
      return { ...principal, authentication: SESSION_AUTHENTICATION };
    },
    end,
  };
}
