import { HUNT_LIMITS, type HuntAgg, type HuntPipe } from './ast.js';
import { fail, isSpace, skipSpace, type Cursor } from './cursor.js';

const PIPES = ['stats', 'top', 'timechart', 'fields', 'sort', 'head'];
const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** The longest explicit `timechart` span. */
export const MAX_SPAN_MS = 366 * UNITS['d']!;

/** A pipe as parsed, with the offset of its `|` for errors about its place. */
interface Placed {
  readonly pipe: HuntPipe;
  readonly at: number;
}

/** A word of a pipe: a field path, a number, a name. */
function word(c: Cursor): string {
  skipSpace(c);
  const start = c.pos;
  while (c.pos < c.text.length && !isSpace(c.text[c.pos]) && !',|()="\\'.includes(c.text[c.pos]!)) c.pos++;
  return c.text.slice(start, c.pos);
}

function field(c: Cursor, what = 'field name'): string {
  const at = (skipSpace(c), c.pos);
  const name = word(c);
  if (name === '' || name.includes('*')) fail(at, [what], `expected a ${what} (a path without wildcards)`);
  return name;
}

function punct(c: Cursor, ch: string): boolean {
  skipSpace(c);
  if (c.text[c.pos] !== ch) return false;
  c.pos++;
  return true;
}

function need(c: Cursor, ch: string): void {
  if (!punct(c, ch)) fail(c.pos, [ch], `expected '${ch}'`);
}

function fieldList(c: Cursor): string[] {
  const out = [field(c)];
  while (punct(c, ',')) out.push(field(c));
  return out;
}

function optionalInt(c: Cursor, max: number, fallback: number): number {
  skipSpace(c);
  const at = c.pos;
  const m = /^\d{1,9}(?![^\s|,])/.exec(c.text.slice(at));
  if (!m) return fallback;
  const n = Number(m[0]);
  if (n < 1 || n > max) fail(at, [`a number from 1 to ${max}`], `expected a number from 1 to ${max}`);
  c.pos += m[0].length;
  return n;
}

/** Whether the next word is `kw` (any case); consumes it if so. */
function keyword(c: Cursor, kw: string): boolean {
  const save = c.pos;
  if (word(c).toLowerCase() === kw) return true;
  c.pos = save;
  return false;
}

function agg(c: Cursor): HuntAgg {
  const at = (skipSpace(c), c.pos);
  const name = word(c).toLowerCase();
  if (name !== 'count' && name !== 'dc') fail(at, ['count()', 'dc(field)'], 'expected count() or dc(field)');
  need(c, '(');
  const result: HuntAgg = name === 'count' ? { fn: 'count' } : { fn: 'dc', field: field(c) };
  need(c, ')');
  return result;
}

function stats(c: Cursor): HuntPipe {
  const aggs = [agg(c)];
  while (punct(c, ',')) aggs.push(agg(c));
  const at = c.pos;
  const by = keyword(c, 'by') ? fieldList(c) : [];
  if (by.length > HUNT_LIMITS.byFields) fail(at, [], `at most ${HUNT_LIMITS.byFields} 'by' fields`);
  return { kind: 'stats', aggs, by };
}

function span(c: Cursor): number | 'auto' {
  const save = c.pos;
  if (!keyword(c, 'span')) return 'auto';
  if (!punct(c, '=')) {
    c.pos = save;
    return 'auto';
  }
  const at = (skipSpace(c), c.pos);
  const text = word(c).toLowerCase();
  if (text === 'auto') return 'auto';
  const m = /^(\d{1,7})([smhd])$/.exec(text);
  const ms = m ? Number(m[1]) * UNITS[m[2]!]! : 0;
  if (ms < 1000 || ms > MAX_SPAN_MS)
    fail(at, ['span such as 30s, 5m, 1h, 1d', 'auto'], 'expected a span from 1s to 366d');
  return ms;
}

function timechart(c: Cursor): HuntPipe {
  const spanMs = span(c);
  const at = (skipSpace(c), c.pos);
  if (agg(c).fn !== 'count') fail(at, ['count()'], 'timechart counts: expected count()');
  return { kind: 'timechart', spanMs, by: keyword(c, 'by') ? field(c) : null };
}

function sort(c: Cursor): HuntPipe {
  const descending = punct(c, '-');
  if (!descending) punct(c, '+');
  skipSpace(c);
  if (/^dc\(/i.test(c.text.slice(c.pos))) {
    c.pos += 3;
    const inner = field(c);
    need(c, ')');
    return { kind: 'sort', field: `dc(${inner})`, descending };
  }
  return { kind: 'sort', field: field(c, 'field or column'), descending };
}

function onePipe(c: Cursor): HuntPipe {
  const at = (skipSpace(c), c.pos);
  const name = word(c).toLowerCase();
  switch (name) {
    case 'stats':
      return stats(c);
    case 'top': {
      const limit = optionalInt(c, HUNT_LIMITS.topMax, 10);
      return { kind: 'top', limit, field: field(c) };
    }
    case 'timechart':
      return timechart(c);
    case 'fields':
      return { kind: 'fields', fields: fieldList(c) };
    case 'sort':
      return sort(c);
    case 'head':
      return { kind: 'head', limit: optionalInt(c, HUNT_LIMITS.headMax, 10) };
    default:
      return fail(at, PIPES, `expected a pipe (${PIPES.join(', ')})`);
  }
}

/** Reads `| pipe ...` to the end of the text and checks their order (docs/hunting.md, "Pipes"). */
export function parsePipes(c: Cursor): HuntPipe[] {
  const placed: Placed[] = [];
  for (skipSpace(c); c.pos < c.text.length; skipSpace(c)) {
    const at = c.pos;
    if (c.text[at] !== '|') fail(at, ['|', 'end of query'], "expected '|' or the end of the query");
    c.pos++;
    placed.push({ pipe: onePipe(c), at });
    skipSpace(c);
    if (c.pos < c.text.length && c.text[c.pos] !== '|')
      fail(c.pos, ['|', 'end of query'], 'unexpected text in the pipe');
  }
  checkOrder(placed);
  return placed.map((p) => p.pipe);
}

const AGGREGATIONS = new Set(['stats', 'top', 'timechart']);

/** The columns an aggregation answers, which a later `sort` may name. */
export function columnsOf(pipe: HuntPipe): string[] {
  if (pipe.kind === 'stats')
    return [...pipe.by, ...pipe.aggs.map((a) => (a.fn === 'count' ? 'count' : `dc(${a.field})`))];
  if (pipe.kind === 'top') return [pipe.field, 'count', 'percent'];
  if (pipe.kind === 'timechart') return pipe.by === null ? ['time', 'count'] : ['time', pipe.by, 'count'];
  return [];
}

function checkOrder(placed: readonly Placed[]): void {
  const aggIndex = placed.findIndex((p) => AGGREGATIONS.has(p.pipe.kind));
  const seen = new Set<string>();
  placed.forEach(({ pipe, at }, i) => {
    if (AGGREGATIONS.has(pipe.kind) && i !== aggIndex) fail(at, [], 'a query has at most one stats, top or timechart');
    if (aggIndex > i) fail(at, [], `'${pipe.kind}' must come after the ${placed[aggIndex]!.pipe.kind}`);
    if (aggIndex >= 0 && pipe.kind === 'fields')
      fail(at, [], "'fields' cannot follow an aggregation: it projects events");
    if (seen.has(pipe.kind)) fail(at, [], `at most one '${pipe.kind}'`);
    if (pipe.kind === 'sort' && seen.has('head')) fail(at, [], "'sort' must come before 'head'");
    if (pipe.kind === 'sort' && aggIndex >= 0) {
      const columns = columnsOf(placed[aggIndex]!.pipe);
      if (!columns.includes(pipe.field)) fail(at, columns, `sort by a column of the result: ${columns.join(', ')}`);
    }
    seen.add(pipe.kind);
  });
}
