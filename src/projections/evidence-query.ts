import type { NormalizedEvent } from '../events/normalized-event.js';
import { eventsOfRecord } from '../events/record-types.js';
import type { ReadModels } from './runtime.js';
import type { Database } from 'lmdb';
import { EVIDENCE_DBS, bucketOf, forEachPosting, type EventDimension } from './evidence.js';
import type { IndexKey } from './types.js';
import { decodeCursor, encodeCursor } from './cursor.js';

/**
 * Where an event stands in the time order, and where a page stopped: its time (epoch ms), the seq
 * of the record that carried it and its position there. Events of the same time are ordered by
 * seq and position, the order they were stored in.
 */
export type EventCursor = [number, number, number];

/** Decodes an events cursor; undefined when it is not one. */
export function parseEventCursor(cursor: string): EventCursor | undefined {
  const c = decodeCursor<unknown>(cursor);
  return Array.isArray(c) && c.length === 3 && c.every((x) => typeof x === 'number' && Number.isFinite(x))
    ? [c[0], c[1], c[2]]
    : undefined;
}

/** Filters of `GET /api/v1/events`; times are epoch milliseconds. */
export interface EventFilter {
  readonly sinceMs?: number;
  readonly untilMs?: number;
  readonly category?: string;
  readonly class?: string;
  readonly entityKey?: string;
  readonly adapter?: string;
  /** Events of these classes are left out (the console hides the service's own `api_access` records by default). */
  readonly excludeClasses?: readonly string[];
}

/** A page of events, newest first, with the cursor of the next page when there may be more. */
export interface EventPage {
  readonly events: NormalizedEvent[];
  readonly nextCursor: string | null;
}

function pickIndex(f: EventFilter): [EventDimension, string] | undefined {
  if (f.entityKey !== undefined) return ['entity', f.entityKey];
  if (f.class !== undefined) return ['class', f.class];
  if (f.category !== undefined) return ['category', f.category];
  if (f.adapter !== undefined) return ['adapter', f.adapter];
  return undefined;
}

function matches(e: NormalizedEvent, f: EventFilter): boolean {
  return (
    (f.category === undefined || e.category === f.category) &&
    (f.class === undefined || e.class === f.class) &&
    (f.excludeClasses === undefined || !f.excludeClasses.includes(e.class)) &&
    (f.adapter === undefined || e.source.adapter === f.adapter) &&
    (f.entityKey === undefined || e.entityKeys.includes(f.entityKey))
  );
}

/** Where a walk of the index starts and how far it goes, in the order it walks. */
export interface Walk {
  readonly lo: number;
  readonly hi: number;
  readonly reverse: boolean;
  /** The place of the last event already handed out (excluded). */
  readonly after: EventCursor | undefined;
  /** How many more events the walk can still hand out in this call. */
  room(): number;
}

/**
 * The events of the index entries under `prefix` with `lo <= time <= hi` and past `after`, a second
 * at a time, sorted by time, seq and position (newest first when `reverse`). Each second's entries
 * are read whole, but only the first `room()` of its events are kept: memory stays bounded by what
 * the page can still take, however many events share a second, and once that much is kept an event
 * behind all of it is passed over without a place made for it, so a page of a crowded second costs
 * a scan of its postings and a sort of what the page can take. The events themselves are not read.
 */
export function* secondsOf(
  db: Database<Uint8Array, IndexKey>,
  prefix: ReadonlyArray<string | number>,
  walk: Walk,
): Generator<EventCursor[]> {
  const { lo, hi, reverse, after } = walk;
  const n = prefix.length;
  const range = reverse
    ? { start: [...prefix, bucketOf(hi) + 1], end: [...prefix, bucketOf(lo)], reverse: true }
    : { start: [...prefix, bucketOf(lo)], end: [...prefix, bucketOf(hi) + 1] };
  /**
   * Where the event at (t, seq, index) stands against place `c` in the walk: above 0 after it, below 0 before it (no
   * place is made to ask).
   */
  const walked = (t: number, seq: number, index: number, c: EventCursor) => {
    const d = t - c[0] || seq - c[1] || index - c[2];
    return reverse ? -d : d;
  };
  const order = (a: EventCursor, b: EventCursor) => walked(a[0], a[1], a[2], b);
  /**
   * Once a crowded second has kept all the room there is: the last place kept, which a later event must come before.
   */
  let bar: EventCursor | undefined;
  const kept = (places: EventCursor[]) => {
    places.sort(order);
    const room = walk.room();
    if (places.length >= room) {
      places.length = room;
      bar = places[room - 1];
    }
    return places;
  };
  let bucket: number | undefined;
  let places: EventCursor[] = [];
  for (const { key, value } of db.getRange(range)) {
    const k = key as Array<string | number>;
    const b = k[n] as number;
    const seq = k[n + 1] as number;
    if (b !== bucket) {
      if (places.length > 0) yield kept(places);
      places = [];
      bucket = b;
      bar = undefined;
    }
    forEachPosting(value, (t, index) => {
      if (t < lo || t > hi) return;
      // Past `after` (still to come), and not behind everything a full second already keeps.
      if (
        (after === undefined || walked(t, seq, index, after) > 0) &&
        (bar === undefined || walked(t, seq, index, bar) < 0)
      )
        places.push([t, seq, index]);
    });
    if (places.length > 2 * walk.room() + 64) kept(places);
  }
  if (places.length > 0) yield kept(places);
}

/** Records a reader keeps decoded across seconds (the events of one record usually span a few). */
export const RECENT_RECORDS = 64;

/**
 * `load` of a record's seq, the last `size` loaded kept for the next asks (the walks over the evidence indexes come
 * back to the same few records second after second).
 */
export function recentRecords<T>(size: number, load: (seq: number) => T): (seq: number) => T {
  const recent = new Map<number, T>();
  return (seq) => {
    if (recent.has(seq)) return recent.get(seq)!;
    const value = load(seq);
    if (recent.size >= size) recent.delete(recent.keys().next().value!);
    recent.set(seq, value);
    return value;
  };
}

/** The NormalizedEvents of committed record `seq` (none when the store no longer holds it). */
export const storedEventsOf = (models: Pick<ReadModels, 'record'>, seq: number): readonly NormalizedEvent[] => {
  const r = models.record(seq);
  return r ? eventsOfRecord(r) : [];
};

/**
 * Reads the events of one second's places, in their order. Each record is decoded once per second
 * however its events interleave with other records' (many senders at once), and only the events
 * the places name are kept until handed out; the last few records decoded are reused by the next
 * seconds of the same walk.
 */
export function eventReader(
  models: Pick<ReadModels, 'record'>,
): (places: readonly EventCursor[]) => Generator<[EventCursor, NormalizedEvent | undefined]> {
  const eventsOf = recentRecords(RECENT_RECORDS, (seq) => storedEventsOf(models, seq));
  return function* (places) {
    const wanted = new Map<number, number[]>();
    for (const [, seq, index] of places) {
      const w = wanted.get(seq);
      if (w) w.push(index);
      else wanted.set(seq, [index]);
    }
    const picked = new Map<number, Map<number, NormalizedEvent | undefined>>();
    for (const place of places) {
      const [, seq, index] = place;
      let got = picked.get(seq);
      if (!got) {
        const events = eventsOf(seq);
        got = new Map(wanted.get(seq)!.map((i) => [i, events[i]]));
        picked.set(seq, got);
      }
      const event = got.get(index);
      got.delete(index);
      yield [place, event];
    }
  };
}

/**
 * Lists events newest first from the LMDB indexes (never a log scan): the most selective index
 * for the filters is walked backwards in time and the other filters are checked per event.
 * A page stops after considering `scanBudget` events so one query cannot walk the whole store;
 * its cursor then says where the next page goes on.
 */
export function listEvents(
  models: ReadModels,
  filter: EventFilter,
  limit: number,
  after?: EventCursor,
  scanBudget = 20_000,
): EventPage {
  const dim = pickIndex(filter);
  const hi = Math.min(after ? after[0] : Number.MAX_VALUE, filter.untilMs ?? Number.MAX_VALUE);
  const lo = filter.sinceMs ?? -Number.MAX_VALUE;
  const db = models.db<Uint8Array>(dim ? EVIDENCE_DBS.byDim : EVIDENCE_DBS.byTime);
  const read = eventReader(models);
  const events: NormalizedEvent[] = [];
  let scanned = 0;
  // The page stops at its scan budget at the latest (events that do not match count too).
  const room = () => scanBudget - scanned;
  for (const second of secondsOf(db, dim ?? [], { lo, hi, reverse: true, after, room })) {
    for (const [place, event] of read(second)) {
      if (event && matches(event, filter)) {
        events.push(event);
        if (events.length >= limit) return { events, nextCursor: encodeCursor(place) };
      }
      if (++scanned >= scanBudget) return { events, nextCursor: encodeCursor(place) };
    }
  }
  return { events, nextCursor: null };
}

/**
 * Up to `max` events with `sinceMs <= time <= untilMs`, oldest first, from the time index, starting
 * after `after` (the place of the last event of the previous chunk). `last` is where to continue;
 * undefined at the end.
 */
export function eventsInTimeOrder(
  models: ReadModels,
  sinceMs: number,
  untilMs: number,
  max: number,
  after?: EventCursor,
): { events: NormalizedEvent[]; last?: EventCursor } {
  const db = models.db<Uint8Array>(EVIDENCE_DBS.byTime);
  const read = eventReader(models);
  const events: NormalizedEvent[] = [];
  let n = 0;
  for (const second of secondsOf(db, [], {
    lo: after ? Math.max(sinceMs, after[0]) : sinceMs,
    hi: untilMs,
    reverse: false,
    after,
    room: () => max - n,
  })) {
    for (const [place, event] of read(second)) {
      if (event) events.push(event);
      if (++n >= max) return { events, last: place };
    }
  }
  return { events };
}
