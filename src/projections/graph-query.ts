import * as v from 'valibot';
import { adjacency, type Entity, type GraphState, type Relationship } from './graph.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/** A page of the graph: entities and the relationships among them, plus the kinds and types present. */
export interface GraphPage {
  readonly entities: Entity[];
  readonly relationships: Relationship[];
  readonly kinds: Record<string, number>;
  readonly relationshipTypes: Record<string, number>;
  readonly nextCursor: string | null;
}

const Seen = { firstSeen: v.string(), lastSeen: v.string(), count: v.number() };

/** A GraphPage as `GET /api/v1/graph` answers it (published in docs/openapi.json). */
export const GraphPageSchema = v.strictObject({
  entities: v.array(v.strictObject({ key: v.string(), kind: v.string(), ...Seen })),
  relationships: v.array(v.strictObject({ from: v.string(), to: v.string(), type: v.string(), ...Seen })),
  kinds: v.record(v.string(), v.number()),
  relationshipTypes: v.record(v.string(), v.number()),
  nextCursor: v.nullable(v.string()),
});

/** Query of `GET /api/v1/graph`. */
export interface GraphQuery {
  readonly entity?: string;
  readonly kind?: string;
  readonly limit: number;
  readonly cursor?: string;
}

function tally<T>(items: Iterable<T>, key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1;
  return out;
}

interface Derived {
  entities: number;
  relationships: number;
  evicted: number;
  sorted: Entity[];
  kinds: Record<string, number>;
  types: Record<string, number>;
}

/**
 * Sorted entities and the kind and type counts, cached per graph. The graph adds entities and
 * relationships and forgets the least recently seen past its limits (a kind or type never changes),
 * so the cache is exact while both sizes and the eviction count hold.
 */
const derivedOf = new WeakMap<GraphState, Derived>();

function derived(g: GraphState): Derived {
  const cached = derivedOf.get(g);
  if (
    cached &&
    cached.entities === g.entities.size &&
    cached.relationships === g.relationships.size &&
    cached.evicted === g.evicted
  )
    return cached;
  const d: Derived = {
    entities: g.entities.size,
    relationships: g.relationships.size,
    evicted: g.evicted,
    sorted: [...g.entities.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    kinds: tally(g.entities.values(), (e) => e.kind),
    types: tally(g.relationships.values(), (r) => r.type),
  };
  derivedOf.set(g, d);
  return d;
}

/** The index of the first entity (of a list sorted by key) whose key sorts after `key`; -1 when none. */
function firstAfter(sorted: readonly Entity[], key: string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]!.key > key) hi = mid;
    else lo = mid + 1;
  }
  return lo < sorted.length ? lo : -1;
}

/**
 * Pages the graph by entity key. With `entity`, the page is that entity's neighbourhood: the
 * entity, its relationships and the entities at their other ends. Undefined when the entity is unknown.
 */
export function queryGraph(g: GraphState, q: GraphQuery): GraphPage | undefined {
  let pool: Entity[];
  let rels: Relationship[];
  if (q.entity !== undefined) {
    const centre = g.entities.get(q.entity);
    if (!centre) return undefined;
    rels = [...(adjacency(g).get(q.entity) ?? [])]
      .map((id) => g.relationships.get(id)!)
      .sort((a, b) => (a.from + a.type + a.to).localeCompare(b.from + b.type + b.to));
    const keys = new Set([q.entity, ...rels.flatMap((r) => [r.from, r.to])]);
    pool = [...keys]
      .map((k) => g.entities.get(k)!)
      .filter(Boolean)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  } else {
    pool = derived(g).sorted;
    rels = [];
  }
  if (q.kind !== undefined) pool = pool.filter((e) => e.kind === q.kind);
  const after = q.cursor ? decodeCursor<string>(q.cursor) : undefined;
  const start = typeof after === 'string' ? firstAfter(pool, after) : 0;
  const page = start < 0 ? [] : pool.slice(start, start + q.limit);
  const inPage = new Set(page.map((e) => e.key));
  if (q.entity === undefined) {
    const ids = new Set<string>();
    for (const e of page)
      for (const id of adjacency(g).get(e.key) ?? []) {
        const r = g.relationships.get(id)!;
        if (inPage.has(r.from) && inPage.has(r.to)) ids.add(id);
      }
    rels = [...ids].map((id) => g.relationships.get(id)!);
  }
  const more = start >= 0 && start + q.limit < pool.length;
  return {
    entities: page,
    relationships: rels,
    kinds: derived(g).kinds,
    relationshipTypes: derived(g).types,
    nextCursor: more ? encodeCursor(page.at(-1)!.key) : null,
  };
}
