import { eventsOf } from '../events/record-types.js';
import { entityKind, forEachRelationship } from '../graph/relationships.js';
import { foldCollectorFacts } from './collector-facts.js';
import type { Projection } from './types.js';

/** An entity of the security graph: one entity key and when it was seen. */
export interface Entity {
  key: string;
  kind: string;
  firstSeen: string;
  lastSeen: string;
  count: number;
}

/** A typed relationship between two entities, counted over the events that showed it. */
export interface Relationship {
  from: string;
  to: string;
  type: string;
  firstSeen: string;
  lastSeen: string;
  count: number;
}

/**
 * The graph read model. `adjacent` maps an entity key to the ids of its relationships; it is
 * derived, so a restored checkpoint leaves it unbuilt (`undefined`) until a query needs it.
 */
export interface GraphState {
  entities: Map<string, Entity>;
  relationships: Map<string, Relationship>;
  adjacent: Map<string, Set<string>> | undefined;
}

/** The adjacency index, built on first use after a restart. */
export function adjacency(g: GraphState): Map<string, Set<string>> {
  if (!g.adjacent) {
    g.adjacent = new Map();
    for (const [id, r] of g.relationships) {
      link(g, r.from, id);
      link(g, r.to, id);
    }
  }
  return g.adjacent;
}

/** The id of a relationship: `from|type|to`. */
export const relationshipId = (r: { from: string; to: string; type: string }) => `${r.from}|${r.type}|${r.to}`;

/** Counts one more sighting of an entity (created with `kind`, by default the key's prefix). */
export function touchEntity(g: GraphState, key: string, time: string, kind?: string): void {
  const e = g.entities.get(key);
  if (!e) g.entities.set(key, { key, kind: kind ?? entityKind(key), firstSeen: time, lastSeen: time, count: 1 });
  else {
    e.count++;
    if (time < e.firstSeen) e.firstSeen = time;
    if (time > e.lastSeen) e.lastSeen = time;
  }
}

/** Records that relationship `id` touches entity `key`. */
export function link(g: GraphState, key: string, id: string): void {
  // Unbuilt: `adjacency()` will index every relationship, this one included.
  if (!g.adjacent) return;
  let s = g.adjacent.get(key);
  if (!s) g.adjacent.set(key, (s = new Set()));
  s.add(id);
}

/**
 * The security graph: entities from every event's entity keys (kind from the key's prefix) and
 * typed relationships derived from actor, endpoints and service (src/graph/relationships.ts).
 * Times compare as canonical UTC strings, which sort chronologically.
 */
export const graphProjection: Projection<GraphState> = {
  name: 'graph',
  version: 2,
  initial: () => ({ entities: new Map(), relationships: new Map(), adjacent: new Map() }),
  evolve(g, record) {
    foldCollectorFacts(g, record.type, record.data, record.at);
    for (const e of eventsOf(record.type, record.data)) {
      const keys = e.entityKeys;
      for (let i = 0; i < keys.length; i++) if (keys.indexOf(keys[i]!) === i) touchEntity(g, keys[i]!, e.time);
      forEachRelationship(e, (from, to, type) => {
        const id = `${from}|${type}|${to}`;
        const existing = g.relationships.get(id);
        if (existing) {
          existing.count++;
          if (e.time < existing.firstSeen) existing.firstSeen = e.time;
          if (e.time > existing.lastSeen) existing.lastSeen = e.time;
          return;
        }
        if (!g.entities.has(from)) touchEntity(g, from, e.time);
        if (!g.entities.has(to)) touchEntity(g, to, e.time);
        g.relationships.set(id, { from, to, type, firstSeen: e.time, lastSeen: e.time, count: 1 });
        link(g, from, id);
        link(g, to, id);
      });
    }
    return g;
  },
  // Columnar checkpoints: arrays of strings and numbers decode far faster than millions of small maps.
  snapshot(g) {
    const e = { key: [] as string[], first: [] as string[], last: [] as string[], count: [] as number[] };
    for (const x of g.entities.values()) { e.key.push(x.key); e.first.push(x.firstSeen); e.last.push(x.lastSeen); e.count.push(x.count); }
    const r = { from: [] as string[], to: [] as string[], type: [] as string[], first: [] as string[], last: [] as string[], count: [] as number[] };
    for (const x of g.relationships.values()) { r.from.push(x.from); r.to.push(x.to); r.type.push(x.type); r.first.push(x.firstSeen); r.last.push(x.lastSeen); r.count.push(x.count); }
    return { e, r };
  },
  restore(data) {
    const { e, r } = data as { e: { key: string[]; first: string[]; last: string[]; count: number[] }; r: { from: string[]; to: string[]; type: string[]; first: string[]; last: string[]; count: number[] } };
    const g: GraphState = { entities: new Map(), relationships: new Map(), adjacent: undefined };
    for (let i = 0; i < e.key.length; i++) g.entities.set(e.key[i]!, { key: e.key[i]!, kind: entityKind(e.key[i]!), firstSeen: e.first[i]!, lastSeen: e.last[i]!, count: e.count[i]! });
    for (let i = 0; i < r.from.length; i++) {
      const rel: Relationship = { from: r.from[i]!, to: r.to[i]!, type: r.type[i]!, firstSeen: r.first[i]!, lastSeen: r.last[i]!, count: r.count[i]! };
      g.relationships.set(relationshipId(rel), rel);
    }
    return g;
  },
};
