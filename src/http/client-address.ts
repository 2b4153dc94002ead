import { isIP } from 'node:net';
import { normalizeAddress, type CidrSet } from '../kernel/cidr.js';

/** Headers that claim a different client than the TCP peer. */
export const FORWARDING_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;

/**
 * The client address of a request: the TCP peer, unless the peer is a trusted proxy, in which
 * case the right-most `X-Forwarded-For` entry that is not itself a trusted proxy. Headers from
 * anyone else are ignored, so a client cannot choose its own address.
 */
export function clientAddress(peer: string | undefined, forwardedFor: string | undefined, trusted: CidrSet): string {
  const p = peer ? normalizeAddress(peer) : 'unknown';
  if (!peer || !forwardedFor || !trusted.has(p)) return p;
  const hops = forwardedFor
    .split(',')
    .map((h) => normalizeAddress(h.trim()))
    .slice(-32);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (isIP(hop) === 0) return p;
    if (!trusted.has(hop)) return hop;
  }
  return hops[0] ?? p;
}
