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
    rels = [...(adjacency(g).get(q.entity) ?? [])].map((id) => g.relationships.get(id)!).sort((a, b) => (a.from + a.type + a.to).localeCompare(b.from + b.type + b.to));
    const keys = new Set([q.entity, ...rels.flatMap((r) => [r.from, r.to])]);
    pool = [...keys].map((k) => g.entities.get(k)!).filter(Boolean);
  } else {
    pool = [...g.entities.values()];
    rels = [];
  }
  if (q.kind !== undefined) pool = pool.filter((e) => e.kind === q.kind);
  pool.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const after = q.cursor ? decodeCursor<string>(q.cursor) : undefined;
  const start = typeof after === 'string' ? pool.findIndex((e) => e.key > after) : 0;
  const page = start < 0 ? [] : pool.slice(start, start + q.limit);
  const inPage = new Set(page.map((e) => e.key));
  if (q.entity === undefined) {
    const ids = new Set<string>();
    for (const e of page) for (const id of adjacency(g).get(e.key) ?? []) {
      const r = g.relationships.get(id)!;
      if (inPage.has(r.from) && inPage.has(r.to)) ids.add(id);
    }
    rels = [...ids].map((id) => g.relationships.get(id)!);
  }
  const more = start >= 0 && start + q.limit < pool.length;
  return {
    entities: page,
    relationships: rels,
    kinds: tally(g.entities.values(), (e) => e.kind),
    relationshipTypes: tally(g.relationships.values(), (r) => r.type),
    nextCursor: more ? encodeCursor(page.at(-1)!.key) : null,
  };
}
