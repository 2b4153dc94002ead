import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { SEEN_WITH_LIMIT, entityKind, forEachRelationship } from '../../src/projections/graph-relationships.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

/**
 * The model: the relationships of one event as first written, plainly (a list per event, the
 * endpoint keys built from their values). The fold's hot path must call back with exactly these,
 * in this order.
 */
function modelRelationships(e: NormalizedEvent): Array<[string, string, string]> {
  const out: Array<[string, string, string]> = [];
  const str = (o: Record<string, unknown> | null | undefined, k: string): string | undefined => {
    const v = o?.[k];
    return typeof v === 'string' && v.length > 0 ? v : typeof v === 'number' ? String(v) : undefined;
  };
  const hostOrIp = (o: Record<string, unknown> | null | undefined) => {
    const host = str(o, 'host');
    if (host) return `host:${host}`;
    const ip = str(o, 'ip');
    return ip ? `ip:${ip}` : undefined;
  };
  let anchor: string | undefined;
  const linked: string[] = [];
  const add = (from: string | undefined, to: string | undefined, type: string) => {
    if (!from || !to || from === to) return;
    anchor ??= from;
    if (!linked.includes(from)) linked.push(from);
    if (!linked.includes(to)) linked.push(to);
    out.push([from, to, type]);
  };
  const domains = e.entityKeys.filter((k) => k.startsWith('domain:'));
  const nodes = e.entityKeys.filter((k) => k.startsWith('node:'));
  const meshnet = e.entityKeys.find((k) => k.startsWith('meshnet:'));
  const firstHost = e.entityKeys.find((k) => k.startsWith('host:'));
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
  for (let i = 0; i < loose.length; i++) {
    const k = loose[i]!;
    if (anchor) out.push([anchor < k ? anchor : k, anchor < k ? k : anchor, 'seen_with']);
    else for (let j = i + 1; j < loose.length; j++) if (k !== loose[j]) out.push([k, loose[j]!, 'seen_with']);
  }
  return out;
}

// Few values, so endpoints, actors and services often match (or just miss) an entity key.
const value = fc.constantFrom('a', 'b', '10.0.0.1', 'a:b', '');
const valueOrNumber = fc.oneof(value, fc.constantFrom(7, 0), fc.constant(undefined));
const kinds = ['ip', 'host', 'user', 'domain', 'node', 'meshnet', 'service', 'process', 'x', 'ipx', ''];
const entityKey = fc.tuple(fc.constantFrom(...kinds), fc.constantFrom('a', 'b', '10.0.0.1', 'a:b', '7')).map(([k, v]) => (k === '' ? v : `${k}:${v}`));
const endpoint = fc.option(fc.record({ host: valueOrNumber, ip: valueOrNumber }, { requiredKeys: [] }), { nil: undefined });

const eventArb: fc.Arbitrary<NormalizedEvent> = fc.record({
  category: fc.constantFrom('identity', 'network', 'system'),
  class: fc.constantFrom('dns_query', 'network_connection', 'authentication'),
  entityKeys: fc.array(entityKey, { maxLength: 14 }),
  actor: fc.option(fc.record({ user: valueOrNumber, host: valueOrNumber }, { requiredKeys: [] }), { nil: undefined }),
  sourceEndpoint: endpoint,
  destinationEndpoint: endpoint,
  service: fc.option(fc.record({ name: valueOrNumber }, { requiredKeys: [] }), { nil: undefined }),
}).map((over) => {
  const e = normalizedEvent({ category: over.category, class: over.class, entityKeys: over.entityKeys }) as NormalizedEvent & Record<string, unknown>;
  for (const k of ['actor', 'sourceEndpoint', 'destinationEndpoint', 'service'] as const) {
    if (over[k] === undefined) delete e[k];
    else e[k] = over[k];
  }
  return e;
});

describe('the relationships of an event', () => {
  it('are the model relationships, in the same order (property)', () => {
    fc.assert(fc.property(eventArb, (e) => {
      const seen: Array<[string, string, string]> = [];
      forEachRelationship(e, (from, to, type) => seen.push([from, to, type]));
      assert.deepEqual(seen, modelRelationships(e));
    }), { numRuns: 2000 });
  });

  it('name an entity kind by the prefix before the first colon (property)', () => {
    fc.assert(fc.property(fc.oneof(entityKey, fc.string({ maxLength: 12 })), (key) => {
      const i = key.indexOf(':');
      assert.equal(entityKind(key), i > 0 ? key.slice(0, i) : 'unknown');
    }), { numRuns: 2000 });
  });
});
