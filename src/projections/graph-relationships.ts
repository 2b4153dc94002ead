import type { ReadSideEvent } from '../events/normalized-event.js';

/** How many entity keys of one event may be linked by the untyped `seen_with` fallback. */
export const SEEN_WITH_LIMIT = 8;

/**
 * Kinds seen so far, each as one string: every entity keeps its kind, and a slice of its key would
 * be a string of its own (24 bytes) for each. Kinds are few (the prefixes of entity keys); past
 * `KIND_LIMIT` distinct ones, further kinds are returned as slices.
 */
const kinds = new Map<string, string>();
const KIND_LIMIT = 256;

/** The kind of an entity key: the prefix before the first colon (`ip:10.0.0.1` is an `ip`). */
export function entityKind(key: string): string {
  const i = key.indexOf(':');
  if (i <= 0) return 'unknown';
  const kind = key.slice(0, i);
  const known = kinds.get(kind);
  if (known !== undefined) return known;
  if (kinds.size < KIND_LIMIT) kinds.set(kind, kind);
  return kind;
}

function str(o: Record<string, unknown> | null | undefined, k: string): string | undefined {
  const v = o?.[k];
  return typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : undefined;
}

/**
 * The entity key `prefix + value` as the event's own entity keys hold it (the same string, whose hash
 * the graph's maps have already computed), or undefined when the event has no such key.
 */
function keyOf(keys: readonly string[], prefix: string, value: string): string | undefined {
  const length = prefix.length + value.length;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (k.length === length && k.startsWith(prefix) && k.endsWith(value)) return k;
  }
  return undefined;
}

/** The entity key of an endpoint: its host, else its address (the event's own key string when it has one). */
function hostOrIp(o: Record<string, unknown> | null | undefined, keys: readonly string[]): string | undefined {
  const host = str(o, 'host');
  if (host) return keyOf(keys, 'host:', host) ?? `host:${host}`;
  const ip = str(o, 'ip');
  return ip ? (keyOf(keys, 'ip:', ip) ?? `ip:${ip}`) : undefined;
}

/**
 * Calls `fn` for each typed relationship of one event, from its actor, endpoints and service
 * (without building a list: this is the graph fold's hot path):
 * a user `authenticated_to` a host, an ip `connected_to` an ip, a host `resolved` a domain,
 * a node `member_of` a meshnet, a host `runs` a service. Entity keys that none of these
 * explains are linked to the first explained entity by `seen_with` (or, when there is none, to
 * each other), the first few only, so one event adds a bounded number of edges.
 */
export function forEachRelationship(e: ReadSideEvent, fn: (from: string, to: string, type: string) => void): void {
  const keys = e.entityKeys;
  let meshnet: string | undefined;
  let firstHost: string | undefined;
  let domains: string[] | undefined;
  let nodes: string[] | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (k.startsWith('domain:')) (domains ??= []).push(k);
    else if (k.startsWith('node:')) (nodes ??= []).push(k);
    else if (k.startsWith('meshnet:')) meshnet ??= k;
    else if (k.startsWith('host:')) firstHost ??= k;
  }
  // The entities a typed relationship explained, the first of them the anchor of `seen_with`.
  const linked: string[] = [];
  const add = (from: string | undefined, to: string | undefined, type: string) => {
    if (!from || !to || from === to) return;
    if (!linked.includes(from)) linked.push(from);
    if (!linked.includes(to)) linked.push(to);
    fn(from, to, type);
  };
  const src = hostOrIp(e.sourceEndpoint, keys);
  const dst = hostOrIp(e.destinationEndpoint, keys);
  if (e.category === 'identity') {
    const user = str(e.actor, 'user');
    const actorHost = str(e.actor, 'host');
    if (user) add(`user:${user}`, dst ?? (actorHost ? `host:${actorHost}` : undefined), 'authenticated_to');
  }
  add(src, dst, 'connected_to');
  if (domains && e.category === 'network' && e.class.includes('dns')) for (const d of domains) add(src, d, 'resolved');
  if (meshnet && nodes) for (const n of nodes) add(n, meshnet, 'member_of');
  const service = str(e.service, 'name');
  if (service) {
    const key = keyOf(keys, 'service:', service);
    if (key) add(dst ?? firstHost, key, 'runs');
  }
  const first = linked[0];
  // The keys no typed relationship explained, each once, the first SEEN_WITH_LIMIT of them.
  let loose: string[] | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    if (linked.includes(k) || loose?.includes(k)) continue;
    if ((loose ??= []).push(k) >= SEEN_WITH_LIMIT) break;
  }
  if (!loose) return;
  for (let i = 0; i < loose.length; i++) {
    const k = loose[i]!;
    if (first) fn(first < k ? first : k, first < k ? k : first, 'seen_with');
    else for (let j = i + 1; j < loose.length; j++) fn(k, loose[j]!, 'seen_with');
  }
}
