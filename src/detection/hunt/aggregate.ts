import type { NormalizedEvent } from '../../events/normalized-event.js';
import { HUNT_LIMITS, type HuntPipe } from './ast.js';
import { compareKeys, groupCells, type Cell, type Rows } from './cells.js';
import { leavesAt } from './resolve.js';
import { cellOf } from './cells.js';

/** An accumulator of an aggregation pipe (`HuntAggregator` in index.ts). */
export interface Accumulator {
  add(e: NormalizedEvent): void;
  merge(other: Accumulator): void;
  finish(): Rows;
  readonly truncated: boolean;
}

type StatsPipe = Extract<HuntPipe, { kind: 'stats' }>;
type TopPipe = Extract<HuntPipe, { kind: 'top' }>;

interface Group {
  readonly key: Cell[];
  count: number;
  readonly distinct: Set<string>[];
}

/** The cross product of each by-field's cells, at most `HUNT_LIMITS.keysPerEvent` combinations. */
function combinations(event: unknown, by: readonly string[][]): Cell[][] {
  let out: Cell[][] = [[]];
  for (const segs of by) {
    const cells = groupCells(event, segs);
    out = out.flatMap((prefix) => cells.map((c) => [...prefix, c])).slice(0, HUNT_LIMITS.keysPerEvent);
  }
  return out;
}

/** `stats count(), dc(f) by a, b`: one row per group, by the first aggregate descending, then keys. */
export function statsAccumulator(pipe: StatsPipe): Accumulator {
  const by = pipe.by.map((f) => f.split('.'));
  const dcFields = pipe.aggs.map((a) => (a.fn === 'dc' ? a.field.split('.') : undefined));
  const groups = new Map<string, Group>();
  let truncated = false;
  const groupOf = (key: Cell[], id: string): Group | undefined => {
    let g = groups.get(id);
    if (g) return g;
    if (groups.size >= HUNT_LIMITS.groups) {
      truncated = true;
      return undefined;
    }
    g = { key, count: 0, distinct: pipe.aggs.map(() => new Set<string>()) };
    groups.set(id, g);
    return g;
  };
  const addDistinct = (set: Set<string>, values: Iterable<string>): void => {
    for (const v of values) {
      if (set.size >= HUNT_LIMITS.groups) truncated = true;
      else set.add(v);
    }
  };
  const self: Accumulator & { groups: Map<string, Group> } = {
    groups,
    get truncated() {
      return truncated;
    },
    add(e) {
      for (const key of combinations(e, by)) {
        const g = groupOf(key, JSON.stringify(key));
        if (!g) continue;
        g.count++;
        dcFields.forEach((segs, i) => {
          if (!segs) return;
          const cells = leavesAt(e, segs)
            .map(cellOf)
            .filter((c) => c !== null);
          addDistinct(
            g.distinct[i]!,
            cells.map((c) => JSON.stringify(c)),
          );
        });
      }
    },
    merge(other) {
      const theirs = (other as typeof self).groups;
      if (!theirs) throw new Error('cannot merge aggregators of different pipes');
      if (other.truncated) truncated = true;
      for (const [id, g] of theirs) {
        const mine = groupOf(g.key, id);
        if (!mine) continue;
        mine.count += g.count;
        g.distinct.forEach((set, i) => addDistinct(mine.distinct[i]!, set));
      }
    },
    finish() {
      const n = pipe.by.length;
      const rows = [...groups.values()].map((g) => [
        ...g.key,
        ...pipe.aggs.map((a, i) => (a.fn === 'count' ? g.count : g.distinct[i]!.size)),
      ]);
      const keys = pipe.by.map((_f, i) => i);
      rows.sort((a, b) => (b[n] as number) - (a[n] as number) || compareKeys(a, b, keys));
      const columns = [...pipe.by, ...pipe.aggs.map((a) => (a.fn === 'count' ? 'count' : `dc(${a.field})`))];
      return { columns, rows };
    },
  };
  return self;
}

/** `top N f`: the N most frequent values of f with their count and share of the matching events. */
export function topAccumulator(pipe: TopPipe): Accumulator {
  const segs = pipe.field.split('.');
  const counts = new Map<string, { cell: Cell; count: number }>();
  let total = 0;
  let truncated = false;
  const bump = (id: string, cell: Cell, by: number): void => {
    const entry = counts.get(id);
    if (entry) entry.count += by;
    else if (counts.size >= HUNT_LIMITS.groups) truncated = true;
    else counts.set(id, { cell, count: by });
  };
  const self: Accumulator & { counts: typeof counts; total: () => number } = {
    counts,
    total: () => total,
    get truncated() {
      return truncated;
    },
    add(e) {
      total++;
      for (const cell of groupCells(e, segs)) bump(JSON.stringify(cell), cell, 1);
    },
    merge(other) {
      const theirs = other as typeof self;
      if (!theirs.counts || typeof theirs.total !== 'function')
        throw new Error('cannot merge aggregators of different pipes');
      if (other.truncated) truncated = true;
      total += theirs.total();
      for (const [id, { cell, count }] of theirs.counts) bump(id, cell, count);
    },
    finish() {
      const rows: Cell[][] = [...counts.values()].map(({ cell, count }) => [cell, count]);
      rows.sort((a, b) => (b[1] as number) - (a[1] as number) || compareKeys(a, b, [0]));
      const kept = rows.slice(0, pipe.limit).map((r) => [...r, Math.round(((r[1] as number) * 10000) / total) / 100]);
      return { columns: [pipe.field, 'count', 'percent'], rows: kept };
    },
  };
  return self;
}
