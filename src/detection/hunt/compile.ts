import type { NormalizedEvent } from '../../events/normalized-event.js';
import { statsAccumulator, topAccumulator, type Accumulator } from './aggregate.js';
import type { HuntPipe, HuntQuery } from './ast.js';
import { cellOf, sortAndHead, type Cell, type Rows } from './cells.js';
import { indexTermsOf, type HuntIndexTerms } from './index-terms.js';
import { compileFilter } from './match.js';
import { leavesAt, rawValuesAt } from './resolve.js';
import { timechartAccumulator } from './timechart.js';

/** An aggregation's accumulator: engines may run several (chunks of a scan) and merge them. */
export interface HuntAggregator {
  add(e: NormalizedEvent): void;
  merge(other: HuntAggregator): void;
  /** Columns and rows, sorted and limited as the pipes say. */
  finish(): { columns: string[]; rows: (string | number | null)[][] };
  /** Whether a bound dropped groups (past 100,000 distinct groups or distinct values). */
  readonly truncated: boolean;
}

/**
 * The order events are answered in: time (the walk's own order), or a field, whose `key` is an event's first value
 * there as a cell (null when absent), compared with `compareCells`.
 */
export type HuntOrder =
  | { readonly field: 'time'; readonly descending: boolean }
  | {
      readonly field: string;
      readonly descending: boolean;
      readonly needsAll: true;
      key(e: NormalizedEvent): Cell;
    };

/** A hunt ready to run (docs/hunting.md): the predicate, the index plan and the output's shape. */
export interface CompiledHunt {
  readonly query: HuntQuery;
  matches(e: NormalizedEvent): boolean;
  readonly indexTerms: HuntIndexTerms;
  readonly output: 'events' | 'rows';
  readonly order: HuntOrder;
  readonly head: number | undefined;
  project(e: NormalizedEvent): Record<string, unknown>;
  aggregator(range: { sinceMs: number; untilMs: number }): HuntAggregator;
}

type Of<K extends HuntPipe['kind']> = Extract<HuntPipe, { kind: K }>;

function pipeOf<K extends HuntPipe['kind']>(q: HuntQuery, kind: K): Of<K> | undefined {
  return q.pipes.find((p): p is Of<K> => p.kind === kind);
}

function orderOf(sort: Of<'sort'> | undefined): HuntOrder {
  if (!sort) return { field: 'time', descending: true };
  if (sort.field === 'time') return { field: 'time', descending: sort.descending };
  const segs = sort.field.split('.');
  return { field: sort.field, descending: sort.descending, needsAll: true, key: (e) => cellOf(leavesAt(e, segs)[0]) };
}

/** `fields a, b`: id, time and those paths (one value as it is, several from arrays as a list, absent left out). */
function projector(fields: Of<'fields'> | undefined): (e: NormalizedEvent) => Record<string, unknown> {
  if (!fields) return (e) => e as unknown as Record<string, unknown>;
  const paths = fields.fields.filter((f) => f !== 'id' && f !== 'time').map((f) => [f, f.split('.')] as const);
  return (e) => {
    const out: Record<string, unknown> = { id: e.id, time: e.time };
    for (const [name, segs] of paths) {
      const values = rawValuesAt(e, segs);
      if (values.length > 0) out[name] = values.length === 1 ? values[0] : values;
    }
    return out;
  };
}

function accumulatorFor(q: HuntQuery, range: { sinceMs: number; untilMs: number }): Accumulator {
  for (const p of q.pipes) {
    if (p.kind === 'stats') return statsAccumulator(p);
    if (p.kind === 'top') return topAccumulator(p);
    if (p.kind === 'timechart') return timechartAccumulator(p, range);
  }
  throw new Error('this hunt answers events, not rows: it has no stats, top or timechart');
}

/** The accumulator behind each aggregator handed out, for `merge`. */
const ACCUMULATORS = new WeakMap<HuntAggregator, Accumulator>();

/** Wraps an accumulator so `finish` applies the `sort` and `head` pipes that follow the aggregation. */
function aggregatorOf(acc: Accumulator, q: HuntQuery): HuntAggregator {
  const sort = pipeOf(q, 'sort');
  const head = pipeOf(q, 'head')?.limit;
  const wrapped: HuntAggregator = {
    add: (e) => acc.add(e),
    merge(other) {
      const theirs = ACCUMULATORS.get(other);
      if (!theirs) throw new Error('cannot merge an aggregator of another hunt');
      acc.merge(theirs);
    },
    finish: (): Rows => sortAndHead(acc.finish(), sort, head),
    get truncated() {
      return acc.truncated;
    },
  };
  ACCUMULATORS.set(wrapped, acc);
  return wrapped;
}

/** Compiles a parsed hunt. */
export function compileHunt(q: HuntQuery): CompiledHunt {
  const test = compileFilter(q.filter);
  const rows = q.pipes.some((p) => p.kind === 'stats' || p.kind === 'top' || p.kind === 'timechart');
  return {
    query: q,
    matches: (e) => test(e),
    indexTerms: indexTermsOf(q.filter),
    output: rows ? 'rows' : 'events',
    order: orderOf(rows ? undefined : pipeOf(q, 'sort')),
    head: rows ? undefined : pipeOf(q, 'head')?.limit,
    project: projector(pipeOf(q, 'fields')),
    aggregator: (range) => aggregatorOf(accumulatorFor(q, range), q),
  };
}
