import { firstOfKey, seenKeys, type ReadSideEvent } from '../events/normalized-event.js';
import { CARRYING_EVENT_TYPES, eventsCarried } from '../events/record-types.js';
import { entityKind, forEachRelationship } from './graph-relationships.js';
import { foldCollectorFacts } from './collector-facts.js';
import { instanceProjection, type Projection } from './types.js';
import { own } from '../log/evidence-fields.js';

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

/** How much of the graph is kept in memory (`limits.graphEntities`, `limits.graphRelationships`). */
export interface GraphLimits {
  readonly entities: number;
  readonly relationships: number;
}

/** Room for a large network in under 200 MiB of heap (about 250 B an entity, 300 B a relationship). */
export const DEFAULT_GRAPH_LIMITS: GraphLimits = { entities: 200_000, relationships: 400_000 };

/**
 * The graph read model. `adjacent` maps an entity key to the ids of its relationships; it is
 * derived, so a restored checkpoint leaves it unbuilt (`undefined`) until a query needs it.
 *
 * Memory is bounded by `limits`, not by history: past a limit, the entity or relationship seen
 * least recently is forgotten (the CLOCK approximation of least-recently-used, in Map order: the
 * oldest entry gets a second chance when it was seen again since the graph reached its limit).
 * Evidence is never lost with it: events stay in the log and the evidence index.
 */
export interface GraphState {
  entities: Map<string, Entity>;
  relationships: Map<string, Relationship>;
  adjacent: Map<string, Set<string>> | undefined;
  readonly limits: GraphLimits;
  /** Keys seen again while the graph was at its limit: spared once by the next eviction pass. */
  seenAgain: { entities: Set<string>; relationships: Set<string> };
  /** Entities and relationships forgotten so far (derived caches compare it). */
  evicted: number;
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

/**
 * The id of a relationship of `type` from entity `from` to `to`: `from|type|to`, as one flat string.
 * The graph keeps an id for as long as its relationship; joined, it is one string of its own, where
 * a template literal would be a chain of concatenations (V8's cons strings) that the graph would
 * keep beside the flat string its first lookup makes of it: 65 bytes more a relationship.
 */
export const relationshipIdOf = (from: string, type: string, to: string): string => [from, type, to].join('|');

/** The id of a relationship: `from|type|to` (`relationshipIdOf`). */
export const relationshipId = (r: { from: string; to: string; type: string }): string =>
  relationshipIdOf(r.from, r.type, r.to);

/**
 * A live iterator over each map's keys, where the last eviction left it. Every key it has passed
 * was deleted (evicted, or moved to the end for its second chance), so its next key is the map's
 * first: `map.keys().next()` would be the same key, but V8 finds it by skipping every deleted slot
 * from the start of the table, and at the limit, where each new entry evicts one, that is quadratic.
 */
const cursors = new WeakMap<Map<string, unknown>, Iterator<string>>();

/** The first (oldest) key of `map`, which the caller deletes. */
function oldestKey(map: Map<string, unknown>): string {
  let next = cursors.get(map)?.next();
  if (!next || next.done) {
    const it = map.keys();
    cursors.set(map, it);
    next = it.next();
  }
  return next.value as string;
}

/** Forgets the least recently seen entries of `map` until it holds at most `max`. */
function evict<V>(
  g: GraphState,
  map: Map<string, V>,
  seenAgain: Set<string>,
  max: number,
  forget: (key: string, value: V) => void,
): void {
  while (map.size > max) {
    const key = oldestKey(map);
    const value = map.get(key)!;
    map.delete(key);
    if (seenAgain.delete(key)) map.set(key, value);
    else {
      forget(key, value);
      g.evicted++;
    }
  }
}

/**
 * Counts one more sighting of an entity (created with `kind`, by default the key's prefix) and
 * returns the graph's copy of its key. A new entity's `key` and `time` are kept as they are given,
 * so they are strings of their own (see `own` in src/log/evidence-fields.ts), as the read side's
 * decoder returns them.
 */
export function touchEntity(g: GraphState, key: string, time: string, kind?: string): string {
  const e = g.entities.get(key);
  if (!e) {
    g.entities.set(key, { key, kind: kind ?? entityKind(key), firstSeen: time, lastSeen: time, count: 1 });
    if (g.entities.size > g.limits.entities)
      evict(g, g.entities, g.seenAgain.entities, g.limits.entities, () => undefined);
    return key;
  }
  e.count++;
  if (time < e.firstSeen) e.firstSeen = time;
  if (time > e.lastSeen) e.lastSeen = time;
  if (g.entities.size >= g.limits.entities) g.seenAgain.entities.add(e.key);
  return e.key;
}

/** Counts one more sighting of a known relationship, at `time` (a string of its own, see `touchEntity`). */
export function touchRelationship(g: GraphState, id: string, r: Relationship, time: string): void {
  r.count++;
  if (time < r.firstSeen) r.firstSeen = time;
  if (time > r.lastSeen) r.lastSeen = time;
  if (g.relationships.size >= g.limits.relationships) g.seenAgain.relationships.add(own(id));
}

/**
 * Adds a new relationship (and both its ends), forgetting the least recently seen one past the
 * limit. Its ends are the entities' own key strings, its times kept as given. `id` is its
 * `relationshipId` when the caller has built it already (of strings the graph may keep).
 */
export function addRelationship(g: GraphState, r: Relationship, id = relationshipId(r)): void {
  r.from = entityKey(g, r.from, r.firstSeen);
  r.to = entityKey(g, r.to, r.firstSeen);
  g.relationships.set(id, r);
  link(g, r.from, id);
  link(g, r.to, id);
  if (g.relationships.size > g.limits.relationships) {
    evict(g, g.relationships, g.seenAgain.relationships, g.limits.relationships, (old, rel) => {
      g.adjacent?.get(rel.from)?.delete(old);
      g.adjacent?.get(rel.to)?.delete(old);
    });
  }
}

/** The graph's own copy of entity `key`, which is added (seen at `time`) when it is not there. */
function entityKey(g: GraphState, key: string, time: string): string {
  return g.entities.get(key)?.key ?? touchEntity(g, key, time);
}

/** Records that relationship `id` touches entity `key`. */
export function link(g: GraphState, key: string, id: string): void {
  // Unbuilt: `adjacency()` will index every relationship, this one included.
  if (!g.adjacent) return;
  let s = g.adjacent.get(key);
  if (!s) g.adjacent.set(key, (s = new Set()));
  s.add(id);
}

const emptyGraph = (limits: GraphLimits, adjacent: GraphState['adjacent']): GraphState => ({
  entities: new Map(),
  relationships: new Map(),
  adjacent,
  limits,
  seenAgain: { entities: new Set(), relationships: new Set() },
  evicted: 0,
});

/**
 * The security graph: entities from every event's entity keys (kind from the key's prefix) and
 * typed relationships derived from actor, endpoints and service (src/projections/graph-relationships.ts),
 * bounded by `limits`. Times compare as canonical UTC strings, which sort chronologically.
 */
export function createGraphProjection(limits: GraphLimits = DEFAULT_GRAPH_LIMITS): Projection<GraphState> {
  return instanceProjection({
    name: 'graph',
    version: 3,
    // The events of evidence records (a collector submission's facts too).
    folds: CARRYING_EVENT_TYPES,
    // Adjacency is built on the first query that needs it (folding keeps it current from then on).
    initial: (): GraphState => emptyGraph(limits, undefined),
    evolve(g, record) {
      if (record.type === 'CollectorSubmissionAccepted') foldCollectorFacts(g, record.data, own(record.at));
      // The read side gives this fold records decoded by `decodeForReadSide`: evidence records'
      // events hold only ReadSideEvent's fields, and every event's time and entity keys are strings
      // of their own, which the graph keeps as they are.
      const events: readonly ReadSideEvent[] = eventsCarried(record);
      for (const e of events) {
        const keys = e.entityKeys;
        const time = e.time;
        const seen = seenKeys(keys);
        for (let i = 0; i < keys.length; i++) if (firstOfKey(keys, i, seen)) touchEntity(g, keys[i]!, time);
        forEachRelationship(e, (from, to, type) => {
          const id = relationshipIdOf(from, type, to);
          const existing = g.relationships.get(id);
          if (existing) touchRelationship(g, id, existing, time);
          else addRelationship(g, { from, to, type, firstSeen: time, lastSeen: time, count: 1 }, id);
        });
      }
      return g;
    },
    // Columnar checkpoints: arrays of strings and numbers decode far faster than millions of small
    // maps. Map order and the second-chance sets are kept, so a restored graph evicts as the live one.
    snapshot(g) {
      const e = {
        key: [] as string[],
        kind: [] as string[],
        first: [] as string[],
        last: [] as string[],
        count: [] as number[],
      };
      for (const x of g.entities.values()) {
        e.key.push(x.key);
        e.kind.push(x.kind);
        e.first.push(x.firstSeen);
        e.last.push(x.lastSeen);
        e.count.push(x.count);
      }
      const r = {
        from: [] as string[],
        to: [] as string[],
        type: [] as string[],
        first: [] as string[],
        last: [] as string[],
        count: [] as number[],
      };
      for (const x of g.relationships.values()) {
        r.from.push(x.from);
        r.to.push(x.to);
        r.type.push(x.type);
        r.first.push(x.firstSeen);
        r.last.push(x.lastSeen);
        r.count.push(x.count);
      }
      return {
        e,
        r,
        seenAgain: { entities: [...g.seenAgain.entities], relationships: [...g.seenAgain.relationships] },
      };
    },
    restore(data) {
      const { e, r, seenAgain } = data as {
        e: { key: string[]; kind: string[]; first: string[]; last: string[]; count: number[] };
        r: { from: string[]; to: string[]; type: string[]; first: string[]; last: string[]; count: number[] };
        seenAgain: { entities: string[]; relationships: string[] };
      };
      const g = emptyGraph(limits, undefined);
      for (let i = 0; i < e.key.length; i++)
        g.entities.set(e.key[i]!, {
          key: e.key[i]!,
          kind: e.kind[i]!,
          firstSeen: e.first[i]!,
          lastSeen: e.last[i]!,
          count: e.count[i]!,
        });
      for (let i = 0; i < r.from.length; i++) {
        const rel: Relationship = {
          from: r.from[i]!,
          to: r.to[i]!,
          type: r.type[i]!,
          firstSeen: r.first[i]!,
          lastSeen: r.last[i]!,
          count: r.count[i]!,
        };
        g.relationships.set(relationshipId(rel), rel);
      }
      g.seenAgain = { entities: new Set(seenAgain.entities), relationships: new Set(seenAgain.relationships) };
      // A smaller limit than the checkpoint was taken with applies at once.
      evict(g, g.entities, g.seenAgain.entities, limits.entities, () => undefined);
      evict(g, g.relationships, g.seenAgain.relationships, limits.relationships, () => undefined);
      return g;
    },
  });
}

/** The graph projection with the default limits. */
export const graphProjection = createGraphProjection();
