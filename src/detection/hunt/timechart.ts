import type { NormalizedEvent } from '../../events/normalized-event.js';
import { millisFromIso } from '../../kernel/time.js';
import type { Accumulator } from './aggregate.js';
import { HUNT_LIMITS, type HuntPipe } from './ast.js';
import { compareKeys, groupCells, type Cell } from './cells.js';

type TimechartPipe = Extract<HuntPipe, { kind: 'timechart' }>;

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;
/** The spans `span=auto` picks from, smallest first. */
export const AUTO_SPANS = [
  S,
  5 * S,
  10 * S,
  30 * S,
  M,
  5 * M,
  10 * M,
  30 * M,
  H,
  3 * H,
  6 * H,
  12 * H,
  D,
  7 * D,
  30 * D,
];

/** The span of `span=auto`: the smallest of AUTO_SPANS giving at most 120 buckets over the range. */
export function autoSpan(range: { sinceMs: number; untilMs: number }): number {
  const width = Math.max(0, range.untilMs - range.sinceMs);
  const fits = AUTO_SPANS.find((s) => Math.ceil(width / s) <= HUNT_LIMITS.autoBuckets);
  return fits ?? Math.ceil(width / HUNT_LIMITS.autoBuckets / D) * D;
}

/** The value cell `other` stands for in a `by` timechart: every value outside the top 10. */
export const OTHER = 'other';

/**
 * `timechart span=X count() [by f]`: counts per bucket (buckets start at multiples of the span since
 * the epoch, from the range's start); with `by`, per value for the 10 most frequent values and `other`.
 */
export function timechartAccumulator(pipe: TimechartPipe, range: { sinceMs: number; untilMs: number }): Accumulator {
  const span = pipe.spanMs === 'auto' ? autoSpan(range) : pipe.spanMs;
  const first = Math.floor(range.sinceMs / span) * span;
  const segs = pipe.by?.split('.');
  /** Bucket start -> value id -> count (value id '' when there is no `by`). */
  const buckets = new Map<number, Map<string, number>>();
  const values = new Map<string, { cell: Cell; total: number }>();
  let truncated = false;
  const bump = (bucket: number, id: string, cell: Cell, by: number): void => {
    const known = values.get(id);
    if (!known && values.size >= HUNT_LIMITS.groups) {
      truncated = true;
      return;
    }
    if (known) known.total += by;
    else values.set(id, { cell, total: by });
    let counts = buckets.get(bucket);
    if (!counts) buckets.set(bucket, (counts = new Map()));
    counts.set(id, (counts.get(id) ?? 0) + by);
  };
  const self: Accumulator & { buckets: typeof buckets; values: typeof values } = {
    buckets,
    values,
    get truncated() {
      return truncated;
    },
    add(e: NormalizedEvent) {
      const t = millisFromIso(e.time);
      if (t === undefined || t < range.sinceMs || t >= range.untilMs) return;
      const bucket = first + Math.floor((t - first) / span) * span;
      if (!segs) return bump(bucket, '', null, 1);
      for (const cell of groupCells(e, segs)) bump(bucket, JSON.stringify(cell), cell, 1);
    },
    merge(other) {
      const theirs = other as typeof self;
      if (!theirs.buckets || !theirs.values) throw new Error('cannot merge aggregators of different pipes');
      if (other.truncated) truncated = true;
      for (const [bucket, counts] of theirs.buckets)
        for (const [id, n] of counts) bump(bucket, id, theirs.values.get(id)!.cell, n);
    },
    finish() {
      const starts = bucketStarts(buckets, first, span, range.untilMs);
      const iso = (ms: number): string => new Date(ms).toISOString();
      if (!segs) return { columns: ['time', 'count'], rows: starts.map((b) => [iso(b), buckets.get(b)?.get('') ?? 0]) };
      const ranked = [...values.entries()].sort(
        ([, a], [, b]) => b.total - a.total || compareKeys([a.cell], [b.cell], [0]),
      );
      const top = ranked.slice(0, HUNT_LIMITS.timechartTop);
      const hasOther = ranked.length > top.length;
      const rows: Cell[][] = [];
      for (const b of starts) {
        const counts = buckets.get(b);
        let inTop = 0;
        for (const [id, { cell }] of top) {
          const n = counts?.get(id) ?? 0;
          inTop += n;
          rows.push([iso(b), cell, n]);
        }
        if (hasOther) rows.push([iso(b), OTHER, sumOf(counts) - inTop]);
      }
      return { columns: ['time', pipe.by!, 'count'], rows };
    },
  };
  return self;
}

function sumOf(counts: Map<string, number> | undefined): number {
  let n = 0;
  for (const c of counts?.values() ?? []) n += c;
  return n;
}

/** Every bucket of the range (zeros included) when there are at most 10,000, else only those with events. */
function bucketStarts(buckets: Map<number, unknown>, first: number, span: number, untilMs: number): number[] {
  const count = Math.ceil((untilMs - first) / span);
  if (count <= HUNT_LIMITS.denseBuckets) return Array.from({ length: Math.max(0, count) }, (_v, i) => first + i * span);
  return [...buckets.keys()].sort((a, b) => a - b);
}
