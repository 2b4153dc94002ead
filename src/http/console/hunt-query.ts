/**
 * The hunt page's work on query text, kept apart from the language's parser (src/detection/hunt/) so the page only
 * ever adds to what the analyst typed: split off the pipes, and the term a pivot adds, the timechart and the top
 * values it asks.
 */

/** A query's filter (before the first `|` outside quotes) and its pipes (from that `|`, or empty). */
export function splitPipes(text: string): { filter: string; pipes: string } {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '\\') i++;
    else if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '|') return { filter: text.slice(0, i).trim(), pipes: text.slice(i).trim() };
  }
  return { filter: text.trim(), pipes: '' };
}

/** Whether a filter has an `or` outside quotes and parentheses, so and-ing a term to it needs parentheses. */
function hasTopLevelOr(filter: string): boolean {
  let quoted = false;
  let depth = 0;
  for (let i = 0; i < filter.length; i++) {
    const ch = filter[i]!;
    if (quoted) {
      if (ch === '\\') i++;
      else if (ch === '"') quoted = false;
    } else if (ch === '"') quoted = true;
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (depth === 0 && /\s/.test(ch) && /^or\s/i.test(filter.slice(i + 1))) return true;
  }
  return false;
}

/** A KQL quoted phrase of `value`: `"` and `\` escaped. */
export function quoted(value: string): string {
  return `"${value.replace(/[\\"]/g, (m) => `\\${m}`)}"`;
}

/** Field paths a pivot may name: what the language reads as a field without quoting. */
export const PIVOT_FIELD = /^[A-Za-z_@][\w@-]*(\.[\w@-]+)*$/;

/** The term `field:"value"`. */
export const termOf = (field: string, value: string) => `${field}:${quoted(value)}`;

/**
 * The query with `field:"value"` and-ed to its filter, its pipes kept: a filter with a top-level `or` is put in
 * parentheses first (`and` binds tighter), an empty or `*` filter is replaced.
 */
export function withTerm(query: string, field: string, value: string): string {
  const { filter, pipes } = splitPipes(query);
  const term = termOf(field, value);
  const next =
    filter === '' || filter === '*'
      ? term
      : hasTopLevelOr(filter)
        ? `(${filter}) and ${term}`
        : `${filter} and ${term}`;
  return pipes === '' ? next : `${next} ${pipes}`;
}

/** The histogram's bucket widths, and how `timechart span=` writes each. */
const SPANS: readonly (readonly [ms: number, text: string])[] = [
  [60_000, '1m'],
  [120_000, '2m'],
  [300_000, '5m'],
  [600_000, '10m'],
  [900_000, '15m'],
  [1_800_000, '30m'],
  [3_600_000, '1h'],
  [7_200_000, '2h'],
  [10_800_000, '3h'],
  [21_600_000, '6h'],
  [43_200_000, '12h'],
  [86_400_000, '1d'],
  [604_800_000, '7d'],
];

/** At most this many bars: enough to see a burst, few enough to point at one. */
const MAX_BUCKETS = 72;

/** The smallest span that draws `[sinceMs, untilMs]` in at most `MAX_BUCKETS` bars. */
export function autoSpan(sinceMs: number, untilMs: number): { ms: number; text: string } {
  const width = Math.max(1, untilMs - sinceMs);
  const [ms, text] = SPANS.find(([s]) => width / s <= MAX_BUCKETS) ?? SPANS[SPANS.length - 1]!;
  return { ms, text };
}

/** The histogram's query: the filter counted per `span` (only for a query without pipes of its own). */
export const timechartOf = (filter: string, span: string) => `${filter || '*'} | timechart span=${span} count()`;

/** The top values query of `field` over the query's filter. */
export const topOf = (filter: string, field: string) => `${filter || '*'} | top 10 ${field}`;

/** A timechart answer as bars: `[bucket start ms, count]`, or undefined when its columns are not `time`, `count`. */
export function seriesOf(
  columns: readonly string[],
  rows: readonly (readonly (string | number | null)[])[],
): [number, number][] | undefined {
  const t = columns.indexOf('time');
  const n = columns.lastIndexOf('count');
  if (t < 0 || n < 0 || columns.length !== 2) return undefined;
  const out: [number, number][] = [];
  for (const row of rows) {
    const at = row[t];
    const ms = typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : NaN;
    const count = Number(row[n]);
    if (Number.isFinite(ms) && Number.isFinite(count)) out.push([ms, count]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/** `[start, end, count]` buckets of `span` covering `[sinceMs, untilMs]`, counts from `series` (missing: 0). */
export function bucketsOf(
  series: readonly [number, number][],
  sinceMs: number,
  untilMs: number,
  spanMs: number,
): [number, number, number][] {
  const first = Math.floor(sinceMs / spanMs) * spanMs;
  const buckets: [number, number, number][] = [];
  for (let s = first; s <= untilMs && buckets.length <= MAX_BUCKETS * 2; s += spanMs) buckets.push([s, s + spanMs, 0]);
  for (const [at, count] of series) {
    const i = Math.floor((at - first) / spanMs);
    if (i >= 0 && i < buckets.length) buckets[i]![2] += count;
  }
  return buckets;
}

/** Leaf values of an event by field path (`actor.user`, `entityKeys`), each value once, for pivots. */
export function leavesOf(e: unknown, max = 400): [string, string][] {
  const out: [string, string][] = [];
  const seen = new Set<string>();
  const walk = (x: unknown, path: string, depth: number) => {
    if (out.length >= max || depth > 8) return;
    if (x === null || x === undefined) return;
    if (Array.isArray(x)) {
      for (const item of x) walk(item, path, depth + 1);
      return;
    }
    if (typeof x === 'object') {
      for (const [k, value] of Object.entries(x)) walk(value, path === '' ? k : `${path}.${k}`, depth + 1);
      return;
    }
    const text = String(x);
    const key = `${path}\0${text}`;
    if (path !== '' && !seen.has(key)) {
      seen.add(key);
      out.push([path, text]);
    }
  };
  walk(e, '', 0);
  return out;
}

/** The hunt of events naming any of `keys` (entity keys), at most the first five: `entityKeys:"…" or …`. */
export function entitiesQuery(keys: readonly string[]): string {
  return keys
    .slice(0, 5)
    .map((k) => termOf('entityKeys', k))
    .join(' or ');
}

/** The hunt page's URL prefilled with `query`, over `[since, until]` when given (else its default, the last day). */
export function huntHref(query: string, range?: { readonly sinceMs: number; readonly untilMs: number }): string {
  const q = new URLSearchParams({ q: query });
  if (range) {
    q.set('range', 'custom');
    q.set('since', new Date(range.sinceMs).toISOString());
    q.set('until', new Date(range.untilMs).toISOString());
  }
  return `/hunt?${q}`;
}
