import type { NormalizedEvent } from '../events/normalized-event.js';
import { canonicalJson } from '../kernel/canonical-json.js';
import {
  addHit,
  newGroup,
  WINDOW_LIMITS,
  type GroupState,
  type GroupUpdate,
  type WindowEntry,
} from './correlation-window.js';
import { eventFieldValue } from './logsources.js';
import type { CompiledCorrelation } from './types.js';

export type { GroupState, WindowEntry } from './correlation-window.js';

/** The windows of one correlation rule, keyed by group key. Plain JSON. */
export interface CorrelationSlot {
  /** The rule definition the windows were built for; a changed rule starts empty. */
  readonly definition: string;
  /** The newest hit time of any group: groups whose window ended before it minus the timespan are dropped. */
  readonly newestMs: number;
  readonly groups: Readonly<Record<string, GroupState>>;
}

/** Correlation window state: plain JSON (no Map, Set or class), bounded, a projection of the hits. */
export interface CorrelationState {
  readonly version: 1;
  /** Hits processed so far: orders hits of equal time and dates group updates. */
  readonly seq: number;
  readonly correlations: Readonly<Record<string, CorrelationSlot>>;
}

/** State bounds: groups per correlation, remembered hits per correlation, and depth of correlation chains. */
export const CORRELATION_STATE_LIMITS = { groups: 4096, entries: 100_000, chainDepth: 8 } as const;

/** Least lateness tolerated: hits may trail the correlation's newest hit by this much (or the timespan, if longer). */
export const MIN_LATENESS_MS = 3_600_000;

/**
 * How far behind the newest hit of a correlation a hit may be and still count. Groups idle for longer than
 * this plus the timespan can no longer influence any hit, so dropping them never changes a result.
 */
export function latenessMs(c: CompiledCorrelation): number {
  return Math.max(c.timespanMs, MIN_LATENESS_MS);
}

/** A detection rule (or chained correlation) match offered to the correlations. */
export interface RuleHit {
  readonly ruleId: string;
  readonly ruleName?: string;
  readonly eventId: string;
  readonly timeMs: number;
  readonly event: NormalizedEvent;
  /** Set on hits made from a correlation fire: its group values, read before the event's fields. */
  readonly groupValues?: Readonly<Record<string, unknown>>;
  /** Set on hits made from a correlation fire: the events behind it. */
  readonly eventIds?: readonly string[];
}

/** A correlation whose condition newly holds for one group. */
export interface CorrelationFire {
  readonly correlationId: string;
  readonly groupKey: string;
  readonly groupValues: Record<string, unknown>;
  /** The count, distinct-value count, or number of rules seen. */
  readonly value: number;
  /** Events behind the fire, the most recent `WINDOW_LIMITS.fireIds`. */
  readonly eventIds: string[];
  readonly firstMs: number;
  readonly lastMs: number;
}

type Slot = { definition: string; newestMs: number; groups: Record<string, GroupState> };

interface Work {
  seq: number;
  readonly slots: Map<string, Slot | CorrelationSlot>;
  readonly touched: Set<string>;
  readonly fired: CorrelationFire[];
  readonly byReference: Map<string, CompiledCorrelation[]>;
}

function own<T>(record: Readonly<Record<string, T>> | undefined, key: string | undefined): T | undefined {
  return record !== undefined && key !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** The empty state. */
export function initialCorrelationState(): CorrelationState {
  return { version: 1, seq: 0, correlations: {} };
}

function definitionOf(c: CompiledCorrelation): string {
  const { type, rules, groupBy, timespanMs, condition, field, aliases } = c;
  return canonicalJson({ type, rules, groupBy, timespanMs, condition, field, aliases });
}

function hitValue(c: CompiledCorrelation, field: string, hit: RuleHit): unknown {
  const carried = own(hit.groupValues, field);
  if (carried !== undefined) return carried;
  const perRule = own(c.aliases, field);
  const name = perRule ? (own(perRule, hit.ruleName) ?? own(perRule, hit.ruleId) ?? field) : field;
  return eventFieldValue(hit.event, name);
}

/** Group-by values of a hit; a hit lacking one of them joins no group. */
function groupValuesOf(c: CompiledCorrelation, hit: RuleHit): Record<string, unknown> | undefined {
  const pairs: Array<[string, unknown]> = [];
  for (const field of c.groupBy) {
    const value = hitValue(c, field, hit);
    if (value === undefined || value === null) return undefined;
    pairs.push([field, value]);
  }
  return Object.fromEntries(pairs);
}

function writableSlot(work: Work, c: CompiledCorrelation): Slot {
  const slot = work.slots.get(c.id);
  if (slot && work.touched.has(c.id)) return slot as Slot;
  const copy: Slot = slot
    ? { definition: slot.definition, newestMs: slot.newestMs, groups: { ...slot.groups } }
    : { definition: definitionOf(c), newestMs: Number.MIN_SAFE_INTEGER, groups: {} };
  work.slots.set(c.id, copy);
  work.touched.add(c.id);
  return copy;
}

function tailIds(entries: readonly WindowEntry[], max: number): string[] {
  const seen = new Set<string>();
  for (let i = entries.length - 1; i >= 0 && seen.size < max; i--) {
    const ids = entries[i]!.ids;
    for (let j = ids.length - 1; j >= 0 && seen.size < max; j--) seen.add(ids[j]!);
  }
  return [...seen].reverse();
}

function update(
  work: Work,
  c: CompiledCorrelation,
  hit: RuleHit,
  values: Record<string, unknown>,
): { key: string; update: GroupUpdate } | undefined {
  let counted: string | undefined;
  if (c.type === 'value_count') {
    const value = hitValue(c, c.field ?? '', hit);
    if (value === undefined || value === null) return undefined;
    counted = canonicalJson(value);
  }
  const timeMs = hit.timeMs + 0; // -0 would not survive a JSON round trip
  const newestMs = work.slots.get(c.id)?.newestMs ?? Number.MIN_SAFE_INTEGER;
  if (timeMs < newestMs - latenessMs(c)) return undefined;
  const key = canonicalJson(values);
  const slot = writableSlot(work, c);
  const r = c.rules.findIndex((ref) => ref === hit.ruleId || ref === hit.ruleName);
  work.seq += 1;
  const ids = hit.eventIds ? hit.eventIds.slice(-WINDOW_LIMITS.chainedIds) : [hit.eventId];
  const entry: WindowEntry = { t: timeMs, s: work.seq, r, ids, ...(counted !== undefined ? { v: counted } : {}) };
  const result = addHit(c, own(slot.groups, key) ?? newGroup(values, timeMs), entry);
  if (!result) return undefined;
  slot.groups[key] = result.group;
  slot.newestMs = Math.max(slot.newestMs, timeMs);
  return { key, update: result };
}

function processHit(work: Work, hit: RuleHit, depth: number): void {
  if (!Number.isFinite(hit.timeMs)) return;
  const targets = new Set([
    ...(work.byReference.get(hit.ruleId) ?? []),
    ...(hit.ruleName ? (work.byReference.get(hit.ruleName) ?? []) : []),
  ]);
  for (const c of targets) {
    const values = groupValuesOf(c, hit);
    const done = values && update(work, c, hit, values);
    if (!values || !done) continue;
    const { key, update: u } = done;
    const eventIds = tailIds(u.evidence, WINDOW_LIMITS.fireIds);
    if (u.fires) {
      const firstMs = u.evidence[0]?.t ?? hit.timeMs;
      const lastMs = u.evidence[u.evidence.length - 1]?.t ?? hit.timeMs;
      work.fired.push({
        correlationId: c.id,
        groupKey: key,
        groupValues: { ...values },
        value: u.value,
        eventIds,
        firstMs,
        lastMs,
      });
    }
    // A chained correlation sees a hit each time this one's condition holds, not only when it fires,
    // so a sustained burst keeps feeding it.
    if (u.satisfied && depth < CORRELATION_STATE_LIMITS.chainDepth) {
      const chained: RuleHit = {
        ruleId: c.id,
        eventId: hit.eventId,
        timeMs: hit.timeMs,
        event: hit.event,
        groupValues: values,
        eventIds,
        ...(c.name !== undefined ? { ruleName: c.name } : {}),
      };
      processHit(work, chained, depth + 1);
    }
  }
}

/** Drops groups no acceptable hit can reach, then the least recently updated groups beyond the caps. */
function sweep(slot: Slot, c: CompiledCorrelation): void {
  const cutoff = slot.newestMs - latenessMs(c) - c.timespanMs;
  const live = Object.entries(slot.groups).filter(([, g]) => g.newestMs >= cutoff);
  const entries = live.reduce((n, [, g]) => n + g.entries.length, 0);
  if (live.length > CORRELATION_STATE_LIMITS.groups || entries > CORRELATION_STATE_LIMITS.entries) {
    live.sort((a, b) => b[1].touched - a[1].touched);
    let total = 0;
    let keep = 0;
    while (
      keep < live.length &&
      keep < CORRELATION_STATE_LIMITS.groups &&
      total + live[keep]![1].entries.length <= CORRELATION_STATE_LIMITS.entries
    ) {
      total += live[keep]![1].entries.length;
      keep++;
    }
    live.length = keep;
  }
  slot.groups = Object.fromEntries(live);
}

function startWork(state: CorrelationState, correlations: readonly CompiledCorrelation[]): Work {
  const work: Work = { seq: state.seq, slots: new Map(), touched: new Set(), fired: [], byReference: new Map() };
  for (const c of correlations) {
    const definition = definitionOf(c);
    const existing = own(state.correlations, c.id);
    // A slot is only kept for the definition it was built under; a changed rule starts empty.
    if (existing?.definition === definition) work.slots.set(c.id, existing);
    for (const ref of new Set(c.rules)) {
      const list = work.byReference.get(ref) ?? [];
      if (!list.includes(c)) list.push(c);
      work.byReference.set(ref, list);
    }
  }
  return work;
}

/**
 * Feeds rule hits, in order, to the correlations: a pure step from state to state (the input state is
 * not modified), so replaying the same hits gives the same fires. Correlations absent from the list
 * lose their state. See docs/detections.md, "Correlation semantics", for windows, late hits and firing.
 */
export function advanceCorrelations(
  state: CorrelationState,
  correlations: CompiledCorrelation[],
  hits: RuleHit[],
): { state: CorrelationState; fired: CorrelationFire[] } {
  const work = startWork(state, correlations);
  for (const hit of hits) processHit(work, hit, 0);
  for (const c of correlations) if (work.touched.has(c.id)) sweep(work.slots.get(c.id) as Slot, c);
  return { state: { version: 1, seq: work.seq, correlations: Object.fromEntries(work.slots) }, fired: work.fired };
}
