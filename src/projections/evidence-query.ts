import type { NormalizedEvent } from '../events/normalized-event.js';
import { eventsOfRecord } from '../events/record-types.js';
import type { ReadModels } from './runtime.js';
import { EVIDENCE_DBS, decodeStored, type EventDimension, type StoredEvent } from './evidence.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/** Where the previous page stopped: event time (ms) and id. */
export type EventCursor = [number, string];

/** Decodes an events cursor; undefined when it is not one. */
export function parseEventCursor(cursor: string): EventCursor | undefined {
  const c = decodeCursor<unknown>(cursor);
  return Array.isArray(c) && c.length === 2 && typeof c[0] === 'number' && typeof c[1] === 'string' ? [c[0], c[1]] : undefined;
}

/** Filters of `GET /api/v1/events`; times are epoch milliseconds. */
export interface EventFilter {
  readonly sinceMs?: number;
  readonly untilMs?: number;
  readonly category?: string;
  readonly class?: string;
  readonly entityKey?: string;
  readonly adapter?: string;
}

/** A page of events, newest first, with the cursor of the next page when there may be more. */
export interface EventPage {
  readonly events: NormalizedEvent[];
  readonly nextCursor: string | null;
}

const HIGH = '\uffff';

function pickIndex(f: EventFilter): [EventDimension, string] | undefined {
  if (f.entityKey !== undefined) return ['entity', f.entityKey];
  if (f.class !== undefined) return ['class', f.class];
  if (f.category !== undefined) return ['category', f.category];
  if (f.adapter !== undefined) return ['adapter', f.adapter];
  return undefined;
}

function matches(e: NormalizedEvent, f: EventFilter): boolean {
  return (f.category === undefined || e.category === f.category)
    && (f.class === undefined || e.class === f.class)
    && (f.adapter === undefined || e.source.adapter === f.adapter)
    && (f.entityKey === undefined || e.entityKeys.includes(f.entityKey));
}

/**
 * Lists events newest first from the LMDB indexes (never a log scan): the most selective index
 * for the filters is walked backwards in time and the other filters are checked per event.
 * A page stops after scanning `scanBudget` keys so one query cannot walk the whole store.
 */
export function listEvents(models: ReadModels, filter: EventFilter, limit: number, after?: EventCursor, scanBudget = 20_000): EventPage {
  const dim = pickIndex(filter);
  const upperT = after ? after[0] : filter.untilMs ?? Number.MAX_VALUE;
  const upperId = after ? after[1] : HIGH;
  const lowerT = filter.sinceMs ?? -Number.MAX_VALUE;
  const prefix: Array<string | number> = dim ? [dim[0], dim[1]] : [];
  const db = models.db<Uint8Array>(dim ? EVIDENCE_DBS.byDim : EVIDENCE_DBS.byTime);
  // A page usually comes from a few records: decode each once.
  const records = new Map<number, readonly NormalizedEvent[]>();
  const load = (s: StoredEvent): NormalizedEvent | undefined => {
    let events = records.get(s.seq);
    if (!events) {
      const r = models.record(s.seq);
      events = r ? eventsOfRecord(r) : [];
      if (records.size > 64) records.clear();
      records.set(s.seq, events);
    }
    return events[s.index];
  };
  const events: NormalizedEvent[] = [];
  let scanned = 0;
  let last: [number, string] | undefined;
  for (const { key, value } of db.getRange({ start: [...prefix, upperT, upperId], end: [...prefix, lowerT], reverse: true })) {
    const parts = key as Array<string | number>;
    const t = parts[prefix.length] as number;
    const id = parts[prefix.length + 1] as string;
    if (after && t === after[0] && id === after[1]) continue;
    last = [t, id];
    if (++scanned > scanBudget) return { events, nextCursor: encodeCursor(last) };
    const event = load(decodeStored(value));
    if (!event || !matches(event, filter)) continue;
    events.push(event);
    if (events.length >= limit) return { events, nextCursor: encodeCursor(last) };
  }
  return { events, nextCursor: null };
}

/**
 * Up to `max` events with `sinceMs <= time <= untilMs`, oldest first, from the time index, starting
 * after `after` (the last key of the previous chunk). `last` is where to continue; undefined at the end.
 */
export function eventsInTimeOrder(models: ReadModels, sinceMs: number, untilMs: number, max: number, after?: EventCursor): { events: NormalizedEvent[]; last?: EventCursor } {
  const db = models.db<Uint8Array>(EVIDENCE_DBS.byTime);
  const records = new Map<number, readonly NormalizedEvent[]>();
  const events: NormalizedEvent[] = [];
  let last: EventCursor | undefined;
  let keys = 0;
  for (const { key, value } of db.getRange({ start: after ? [after[0], after[1]] : [sinceMs], end: [untilMs, HIGH] })) {
    const [t, id] = key as [number, string];
    if (after && t === after[0] && id === after[1]) continue;
    last = [t, id];
    const s = decodeStored(value);
    let carried = records.get(s.seq);
    if (!carried) {
      const r = models.record(s.seq);
      carried = r ? eventsOfRecord(r) : [];
      if (records.size > 64) records.clear();
      records.set(s.seq, carried);
    }
    const event = carried[s.index];
    if (event) events.push(event);
    if (++keys >= max) return { events, last };
  }
  return { events };
}
