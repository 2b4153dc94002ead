import type { NormalizedEvent } from '../events/normalized-event.js';

/** A typed edge derived from one event. */
export interface DerivedRelationship {
  readonly from: string;
  readonly to: string;
  readonly type: string;
}

/** How many entity keys of one event may be paired by the untyped `seen_with` fallback. */
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
 * Typed relationships of one event, from its actor, endpoints and service:
 * a user `authenticated_to` a host, an ip `connected_to` an ip, a host `resolved` a domain,
 * a node `member_of` a meshnet, a host `runs` a service. Entity keys that none of these
 * explains are linked by `seen_with` (the first few only, so one event adds a bounded number).
 */
export function deriveRelationships(e: NormalizedEvent): DerivedRelationship[] {
  const out: DerivedRelationship[] = [];
  const keys = new Set(e.entityKeys);
  const add = (from: string | undefined, to: string | undefined, type: string) => {
    if (from && to && from !== to) out.push({ from, to, type });
  };
  const user = str(e.actor, 'user');
  const target = hostOrIp(e.destinationEndpoint) ?? (str(e.actor, 'host') ? `host:${str(e.actor, 'host')}` : undefined);
  if (user && e.category === 'identity') add(`user:${user}`, target, 'authenticated_to');
  add(hostOrIp(e.sourceEndpoint), hostOrIp(e.destinationEndpoint), 'connected_to');
  const domains = [...keys].filter((k) => k.startsWith('domain:'));
  if (e.category === 'network' && e.class.includes('dns')) {
    for (const d of domains) add(hostOrIp(e.sourceEndpoint), d, 'resolved');
  }
  const meshnet = [...keys].find((k) => k.startsWith('meshnet:'));
  if (meshnet) for (const k of keys) if (k.startsWith('node:')) add(k, meshnet, 'member_of');
  const service = str(e.service, 'name');
  const serviceHost = hostOrIp(e.destinationEndpoint) ?? [...keys].find((k) => k.startsWith('host:'));
  if (service && keys.has(`service:${service}`)) add(serviceHost, `service:${service}`, 'runs');
  const linked = new Set(out.flatMap((r) => [r.from, r.to]));
  const loose = [...keys].filter((k) => !linked.has(k)).slice(0, SEEN_WITH_LIMIT);
  const anchor = [...linked][0];
  for (let i = 0; i < loose.length; i++) {
    if (anchor) add(anchor < loose[i]! ? anchor : loose[i], anchor < loose[i]! ? loose[i] : anchor, 'seen_with');
    else for (let j = i + 1; j < loose.length; j++) add(loose[i], loose[j], 'seen_with');
  }
  return out;
}
