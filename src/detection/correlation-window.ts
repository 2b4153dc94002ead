import type { CompiledCorrelation, CountCondition } from './types.js';

/** One remembered hit of a group: event time, arrival sequence, rule position, counted value, event ids. */
export interface WindowEntry {
  readonly t: number;
  readonly s: number;
  /** Index in `rules` of the reference the hit matched (the first one, when a rule is listed twice). */
  readonly r: number;
  /** value_count: the counted field value as stable JSON text. */
  readonly v?: string;
  readonly ids: readonly string[];
}

/** The state of one group of one correlation. Plain JSON. */
export interface GroupState {
  readonly values: Readonly<Record<string, unknown>>;
  /** Sorted by (t, s); only hits within the timespan of `newestMs`. */
  readonly entries: readonly WindowEntry[];
  /** The newest event time this group has seen: its window ends there. */
  readonly newestMs: number;
  /** False after a fire, until the condition has been false again (one fire per crossing). */
  readonly armed: boolean;
  /** Sequence number of the last update, for least-recently-updated eviction. */
  readonly touched: number;
}

/** Per-group bounds: entries kept (equal to the highest threshold a rule may ask) and evidence ids listed. */
export const WINDOW_LIMITS = { entries: 1000, fireIds: 256, chainedIds: 32 } as const;

/** What one hit did to a group. */
export interface GroupUpdate {
  readonly group: GroupState;
  /** The condition holds after this hit (chained correlations see each such hit). */
  readonly satisfied: boolean;
  /** The condition newly holds: the group fires. */
  readonly fires: boolean;
  readonly value: number;
  readonly evidence: readonly WindowEntry[];
}

/** Whether a count satisfies every bound of a condition. */
export function countHolds(condition: CountCondition, n: number): boolean {
  const { gt, gte, lt, lte, eq, neq } = condition;
  return (
    (gt === undefined || n > gt) &&
    (gte === undefined || n >= gte) &&
    (lt === undefined || n < lt) &&
    (lte === undefined || n <= lte) &&
    (eq === undefined || n === eq) &&
    (neq === undefined || n !== neq)
  );
}

function before(a: WindowEntry, b: WindowEntry): boolean {
  return a.t < b.t || (a.t === b.t && a.s < b.s);
}

function insertSorted(entries: readonly WindowEntry[], entry: WindowEntry): WindowEntry[] {
  const out = entries.slice();
  let i = out.length;
  // Hits mostly arrive in time order, so the insertion point is almost always the end.
  while (i > 0 && before(entry, out[i - 1]!)) i--;
  out.splice(i, 0, entry);
  return out;
}

/** The entries of the ordered chain rules[0] -> rules[1] -> ... found leftmost-first (may be partial). */
function orderedChain(c: CompiledCorrelation, entries: readonly WindowEntry[]): WindowEntry[] {
  const chain: WindowEntry[] = [];
  for (const e of entries) {
    if (chain.length === c.rules.length) break;
    if (c.rules[chain.length] === c.rules[e.r]) chain.push(e);
  }
  return chain;
}

/** The count the condition is about, and the entries that make it up. */
export function measure(
  c: CompiledCorrelation,
  entries: readonly WindowEntry[],
): { value: number; evidence: readonly WindowEntry[] } {
  switch (c.type) {
    case 'event_count':
    case 'value_count':
      // value_count keeps one entry per distinct value, so the entry count is the distinct count.
      return { value: entries.length, evidence: entries };
    case 'temporal':
      return { value: new Set(entries.map((e) => c.rules[e.r])).size, evidence: entries };
    case 'temporal_ordered': {
      const chain = orderedChain(c, entries);
      return { value: chain.length, evidence: chain };
    }
  }
}

/** value_count keeps the newest hit per value, temporal the newest hit per rule: presence is what counts. */
function replaces(c: CompiledCorrelation, old: WindowEntry, entry: WindowEntry): boolean {
  if (c.type === 'value_count') return old.v === entry.v;
  if (c.type === 'temporal') return c.rules[old.r] === c.rules[entry.r];
  return false;
}

function withEntry(
  c: CompiledCorrelation,
  entries: readonly WindowEntry[],
  entry: WindowEntry,
): readonly WindowEntry[] {
  const same = entries.find((old) => replaces(c, old, entry));
  if (same && before(entry, same)) return entries;
  const kept = same ? entries.filter((old) => old !== same) : entries;
  const out = insertSorted(kept, entry);
  return out.length > WINDOW_LIMITS.entries ? out.slice(out.length - WINDOW_LIMITS.entries) : out;
}

/** A fresh group for the given group-by values, first seen at `timeMs`. */
export function newGroup(values: Record<string, unknown>, timeMs: number): GroupState {
  return { values, entries: [], newestMs: timeMs, armed: true, touched: 0 };
}

/**
 * Adds one hit to a group. The window ends at the newest event time the group has seen and spans
 * `timespanMs` (inclusive); a hit older than that window is ignored. The group re-arms when the
 * condition is false just before a hit, which is when the count is lowest since the last one.
 */
export function addHit(c: CompiledCorrelation, group: GroupState, entry: WindowEntry): GroupUpdate | undefined {
  const newestMs = Math.max(group.newestMs, entry.t);
  const cutoff = newestMs - c.timespanMs;
  if (entry.t < cutoff) return undefined;
  const live = group.entries.filter((e) => e.t >= cutoff);
  const armed = group.armed || !countHolds(c.condition, measure(c, live).value);
  const entries = withEntry(c, live, entry);
  const { value, evidence } = measure(c, entries);
  const satisfied = countHolds(c.condition, value);
  const fires = satisfied && armed;
  return {
    group: { values: group.values, entries, newestMs, armed: armed && !fires, touched: entry.s },
    satisfied,
    fires,
    value,
    evidence,
  };
}
