import { cidrSet, normalizeAddress } from '../kernel/cidr.js';
import type { MeshAllowlistEntry } from './mesh-allowlist.js';
import { addrPort, type WhoIsAnswer } from './mesh-localapi.js';
import { meshPrincipal, parseWhoIs, type WhoIs } from './mesh-principal.js';
import type { Principal } from './registry.js';

/** Identity through the local mesh daemon (spec 5.1 #8), as the guard uses it. */
export interface MeshIdentity {
  /** Whether a TCP peer is in the ranges the daemon is asked about. */
  covers(peer: string): boolean;
  /** The principal of the TCP peer `ip:port`, or undefined for every kind of failure (fail closed). */
  identify(peer: string, port: number | undefined): Promise<Principal | undefined>;
}

/** What a mesh identity is built from. */
export interface MeshIdentityOptions {
  readonly peerRanges: readonly string[];
  /** One whois question to the daemon. */
  readonly whois: (addr: string) => Promise<WhoIsAnswer>;
  /** The live allowlist; undefined while it cannot be trusted. */
  readonly allowlist: () => readonly MeshAllowlistEntry[] | undefined;
  /** Monotonic milliseconds (a parameter so tests can move it). */
  readonly nowMs: () => number;
  /** How long an answer is reused for the same `ip:port`. */
  readonly cacheMs: number;
  readonly cacheEntries: number;
  /** Lookups waiting on the daemon at once; past it a request is refused rather than queued. */
  readonly maxInFlight: number;
  /** Told why a lookup failed (daemon down, timeout, malformed answer); never for an unknown peer. */
  readonly onProblem: (message: string) => void;
}

/**
 * Builds the mesh identity: whois answers are cached per `ip:port` (the daemon's answer depends on
 * the port when it runs with userspace networking) for `cacheMs`, at most `cacheEntries` of them,
 * oldest out first. Only the answer is cached, never the principal, so an allowlist change applies
 * to the next request. Failed lookups are not cached; concurrent ones for one address share a call,
 * and at most `maxInFlight` wait on the daemon at once, so a flood cannot pile up connections to it.
 */
export function createMeshIdentity(o: MeshIdentityOptions): MeshIdentity {
  const ranges = cidrSet(o.peerRanges);
  const cache = new Map<string, { at: number; answer: Promise<WhoIs | undefined> }>();
  let inFlight = 0;
  const lookup = (addr: string): Promise<WhoIs | undefined> => {
    const now = o.nowMs();
    const hit = cache.get(addr);
    if (hit && now - hit.at < o.cacheMs) return hit.answer;
    cache.delete(addr);
    if (inFlight >= o.maxInFlight) {
      o.onProblem(`more than ${o.maxInFlight} mesh daemon lookups waiting: refusing until they end`);
      return Promise.resolve(undefined);
    }
    inFlight++;
    const answer = Promise.resolve()
      .then(() => o.whois(addr))
      .finally(() => {
        inFlight--;
      })
      .then(
        (a) => {
          if (a.kind === 'unknown') return undefined;
          const who = a.kind === 'found' ? parseWhoIs(a.body) : undefined;
          if (!who)
            o.onProblem(
              a.kind === 'failed'
                ? `mesh daemon lookup failed: ${a.reason}`
                : 'mesh daemon answered whois with a malformed body',
            );
          return who;
        },
        (err: unknown) => {
          o.onProblem(`mesh daemon lookup failed: ${(err as Error).message}`);
          return undefined;
        },
      );
    cache.set(addr, { at: now, answer });
    while (cache.size > o.cacheEntries) cache.delete(cache.keys().next().value!);
    void answer.then((who) => {
      if (!who && cache.get(addr)?.answer === answer) cache.delete(addr);
    });
    return answer;
  };
  return {
    covers: (peer) => ranges.has(peer),
    async identify(peer, port) {
      if (port === undefined || !ranges.has(peer)) return undefined;
      const who = await lookup(addrPort(normalizeAddress(peer), port));
      const allowlist = o.allowlist();
      return who && allowlist ? meshPrincipal(who, allowlist) : undefined;
    },
  };
}
