/**
 * The hunting query's syntax tree (docs/hunting.md): a KQL filter over NormalizedEvent fields and the
 * pipes after it. Plain data, so it prints, compares and crosses a worker boundary as it is.
 */

/** A value as written: quoted (exact, `*` literal) or unquoted (`parts` joined by `*` wildcards). */
export type HuntValue =
  { readonly quoted: true; readonly text: string } | { readonly quoted: false; readonly parts: readonly string[] };

/** A range comparison operator. */
export type HuntRangeOp = '<' | '<=' | '>' | '>=';

/**
 * A filter expression. `and`/`or` hold two or more items; a parenthesized group of the same
 * operator stays its own node. `field` is a dotted path; `*` in it is a wildcard over paths.
 * A `match` without a field is free text.
 */
export type HuntExpr =
  | { readonly kind: 'all' }
  | { readonly kind: 'and'; readonly items: readonly HuntExpr[] }
  | { readonly kind: 'or'; readonly items: readonly HuntExpr[] }
  | { readonly kind: 'not'; readonly item: HuntExpr }
  | { readonly kind: 'match'; readonly field: string | null; readonly value: HuntValue }
  | { readonly kind: 'exists'; readonly field: string }
  | { readonly kind: 'range'; readonly field: string; readonly op: HuntRangeOp; readonly value: HuntValue }
  | { readonly kind: 'nested'; readonly field: string; readonly query: HuntExpr };

/** One aggregate of `stats`. */
export type HuntAgg = { readonly fn: 'count' } | { readonly fn: 'dc'; readonly field: string };

/** One pipe after the filter. `timechart`'s span is in milliseconds. */
export type HuntPipe =
  | { readonly kind: 'stats'; readonly aggs: readonly HuntAgg[]; readonly by: readonly string[] }
  | { readonly kind: 'top'; readonly limit: number; readonly field: string }
  | { readonly kind: 'timechart'; readonly spanMs: number | 'auto'; readonly by: string | null }
  | { readonly kind: 'fields'; readonly fields: readonly string[] }
  | { readonly kind: 'sort'; readonly field: string; readonly descending: boolean }
  | { readonly kind: 'head'; readonly limit: number };

/** A parsed hunt: the filter and its pipes. */
export interface HuntQuery {
  readonly filter: HuntExpr;
  readonly pipes: readonly HuntPipe[];
}

/** A parse error: the 0-based offset in the query text, what was expected there, and a sentence. */
export interface HuntSyntaxError {
  readonly position: number;
  readonly expected: readonly string[];
  readonly message: string;
}

/** What `parseHunt` answers. */
export type HuntParse = { ok: true; query: HuntQuery } | { ok: false; error: HuntSyntaxError };

/** Bounds on a query, so a hostile text costs little to refuse. */
export const HUNT_LIMITS = {
  textLength: 16 * 1024,
  depth: 64,
  terms: 1000,
  topMax: 1000,
  headMax: 100_000,
  groups: 100_000,
  byFields: 8,
  /** Group keys one event may add to a `stats` with several array-valued `by` fields. */
  keysPerEvent: 1000,
  timechartTop: 10,
  autoBuckets: 120,
  denseBuckets: 10_000,
} as const;

/** The NormalizedEvent paths the console completes (attributes vary by source and are not listed). */
export const HUNT_FIELDS: readonly string[] = [
  'id',
  'time',
  'ingestedAt',
  'category',
  'class',
  'activity',
  'outcome',
  'severity',
  'source.adapter',
  'source.instance',
  'source.recordId',
  'entityKeys',
  'actor.user',
  'actor.host',
  'sourceEndpoint.ip',
  'sourceEndpoint.port',
  'sourceEndpoint.host',
  'destinationEndpoint.ip',
  'destinationEndpoint.port',
  'destinationEndpoint.host',
  'service.name',
  'correlation',
  'attributes',
  'rawReference',
];

/** The fields an engine's indexes answer exactly; `matches` compares them case-sensitively so the two agree. */
export const INDEX_FIELDS = ['category', 'class', 'source.adapter', 'entityKeys'] as const;
