import type { NormalizedEvent } from '../events/normalized-event.js';

/** How many entity keys of one event may be linked by the untyped `seen_with` fallback. */
export const SEEN_WITH_LIMIT = 8;

/** The kind of an entity key: the prefix before the first colon (`ip:10.0.0.1` is an `ip`). */
export function entityKind(key: string): string {
  const i = key.indexOf(':');
  return i > 0 ? key.slice(0, i) : 'unknown';
}

function str(o: Record<string, unknown> | null | undefined, k: string): string | undefined {
  const v = o?.[k];
  return typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : undefined;
}

function hostOrIp(o: Record<string, unknown> | null | undefined): string | undefined {
  const host = str(o, 'host');
  if (host) return `host:${host}`;
  const ip = str(o, 'ip');
  return ip ? `ip:${ip}` : undefined;
}

/**
 * Calls `fn` for each typed relationship of one event, from its actor, endpoints and service
 * (without building a list: this is the graph fold's hot path):
 * a user `authenticated_to` a host, an ip `connected_to` an ip, a host `resolved` a domain,
 * a node `member_of` a meshnet, a host `runs` a service. Entity keys that none of these
 * explains are linked to the first explained entity by `seen_with` (or, when there is none, to
 * each other), the first few only, so one event adds a bounded number of edges.
 */
export function forEachRelationship(e: NormalizedEvent, fn: (from: string, to: string, type: string) => void): void {
  let anchor: string | undefined;
  const linked: string[] = [];
  const add = (from: string | undefined, to: string | undefined, type: string) => {
    if (!from || !to || from === to) return;
    anchor ??= from;
    if (!linked.includes(from)) linked.push(from);
    if (!linked.includes(to)) linked.push(to);
    fn(from, to, type);
  };
  let meshnet: string | undefined;
  let firstHost: string | undefined;
  const domains: string[] = [];
  const nodes: string[] = [];
  for (const k of e.entityKeys) {
    if (k.startsWith('domain:')) domains.push(k);
    else if (k.startsWith('node:')) nodes.push(k);
    else if (k.startsWith('meshnet:')) meshnet ??= k;
    else if (k.startsWith('host:')) firstHost ??= k;
  }
  const src = hostOrIp(e.sourceEndpoint);
  const dst = hostOrIp(e.destinationEndpoint);
  const user = str(e.actor, 'user');
  const actorHost = str(e.actor, 'host');
  if (user && e.category === 'identity') add(`user:${user}`, dst ?? (actorHost ? `host:${actorHost}` : undefined), 'authenticated_to');
  add(src, dst, 'connected_to');
  if (e.category === 'network' && e.class.includes('dns')) for (const d of domains) add(src, d, 'resolved');
  if (meshnet) for (const n of nodes) add(n, meshnet, 'member_of');
  const service = str(e.service, 'name');
  if (service && e.entityKeys.includes(`service:${service}`)) add(dst ?? firstHost, `service:${service}`, 'runs');
  const loose: string[] = [];
  for (const k of e.entityKeys) {
    if (loose.length >= SEEN_WITH_LIMIT) break;
    if (!linked.includes(k) && !loose.includes(k)) loose.push(k);
  }
  const first = anchor;
  for (let i = 0; i < loose.length; i++) {
    const k = loose[i]!;
    if (first) fn(first < k ? first : k, first < k ? k : first, 'seen_with');
    else for (let j = i + 1; j < loose.length; j++) if (k !== loose[j]) fn(k, loose[j]!, 'seen_with');
  }
}
