import { CARRYING_EVENT_TYPES, eventsCarried, eventsOfRecord } from '../events/record-types.js';
import {
  firstOfKey,
  seenKeys,
  type NormalizedEvent,
  type ReadSideEvent,
  type WriteSideEvent,
} from '../events/normalized-event.js';
import { canonicalJson } from '../kernel/canonical-json.js';
import { millisFromIso } from '../kernel/time.js';
import { instanceIndex } from './types.js';
import type { ReadModels } from './runtime.js';

/**
 * Where one stored event is: the seq of the record that carried it and its position there.
 * The event itself is read from the log, so it is stored once.
 */
export interface StoredEvent {
  readonly seq: number;
  readonly index: number;
}

/** Encodes a StoredEvent as 8 bytes (seq, position), cheaper than a msgpack map per event. */
export function encodeStored(s: StoredEvent): Uint8Array {
  const b = Buffer.allocUnsafe(8);
  b.writeUInt32BE(s.seq, 0);
  b.writeUInt32BE(s.index, 4);
  return b;
}

/** Decodes a StoredEvent. */
export function decodeStored(b: Uint8Array): StoredEvent {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  return { seq: v.getUint32(0), index: v.getUint32(4) };
}

/** The dimensions `GET /api/v1/events` can filter on through an index. */
export const EVENT_DIMENSIONS = ['category', 'class', 'adapter', 'entity'] as const;
/** One indexed dimension. */
export type EventDimension = (typeof EVENT_DIMENSIONS)[number];

/** Database names of the evidence index. */
export const EVIDENCE_DBS = { byId: 'ev', byTime: 'ev-time', byDim: 'ev-dim' } as const;

/** Whether two events with the same id have the same content (key order does not matter). */
export function sameEvent(a: NormalizedEvent, b: NormalizedEvent): boolean {
  if (a === b) return true;
  try {
    return canonicalJson(a) === canonicalJson(b);
  } catch (err) {
    // A stored event nested deeper than the serializer can follow (an old log) differs from any
    // event the edge admits today.
    if (err instanceof RangeError) return false;
    throw err;
  }
}

/**
 * Milliseconds since the epoch of an event time, to the microsecond (NaN-free: 0 for the
 * unparseable, which the schema prevents).
 */
export function eventTimeMs(event: Pick<NormalizedEvent, 'time'>): number {
  return millisFromIso(event.time) ?? 0;
}

/** The slice of the read models that finds stored events: the evidence index and the records it points into. */
export type EvidenceLookup = Pick<ReadModels, 'index' | 'record'>;

/** Whether an event with this id is stored (or staged), without reading the event itself. */
export function hasEvent(models: Pick<EvidenceLookup, 'index'>, id: string): boolean {
  return models.index.get(EVIDENCE_DBS.byId, id) !== undefined;
}

/**
 * The stored event with this id, including events of records not yet committed. `decoded`
 * caches records already read, so re-sending a whole batch decodes its record once.
 */
export function lookupEvent(
  models: EvidenceLookup,
  id: string,
  decoded = new Map<number, readonly NormalizedEvent[]>(),
): NormalizedEvent | undefined {
  const bytes = models.index.get(EVIDENCE_DBS.byId, id) as Uint8Array | undefined;
  if (!bytes) return undefined;
  const at = decodeStored(bytes);
  let events = decoded.get(at.seq);
  if (!events) {
    const r = models.record(at.seq);
    events = r ? eventsOfRecord(r) : [];
    decoded.set(at.seq, events);
  }
  return events[at.index];
}

/**
 * The write side's evidence index: every accepted event by id (where it is in the log), in LMDB in
 * the same transaction as its record, so deciders know exactly which ids are stored. Re-applying
 * an already stored id changes nothing.
 */
export const evidenceIndex = instanceIndex({
  name: 'evidence',
  version: 4,
  dbs: [EVIDENCE_DBS.byId],
  readDbs: [EVIDENCE_DBS.byId],
  binaryDbs: [EVIDENCE_DBS.byId],
  filteredDbs: [EVIDENCE_DBS.byId],
  folds: CARRYING_EVENT_TYPES,
  apply(record, read, write) {
    // A replay or a restart gives this index evidence records whose events hold only WriteSideEvent's fields.
    const events: readonly WriteSideEvent[] = eventsCarried(record);
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      if (read.get(EVIDENCE_DBS.byId, e.id) !== undefined) continue;
      write.put(EVIDENCE_DBS.byId, e.id, encodeStored({ seq: record.seq, index: i }));
    }
  },
});

/** The span of event time one posting of the read side's evidence index covers. */
const POSTING_SPAN_MS = 1000;

/** The second (POSTING_SPAN_MS) an event time falls in: the bucket part of an evidence-read key. */
export const bucketOf = (timeMs: number): number => Math.floor(timeMs / POSTING_SPAN_MS);

/**
 * Encodes the posting list of events `positions` of a record: each one's time (float64, from `times`) and position
 * (uint32), 12 bytes an entry.
 */
function encodePostings(times: Float64Array, positions: readonly number[]): Uint8Array {
  // A Buffer (from Node's pool when small), written big-endian as a DataView would: a small
  // Uint8Array's `.buffer` would have to be moved off the heap first, once per posting.
  const b = Buffer.allocUnsafe(positions.length * 12);
  for (let i = 0; i < positions.length; i++) {
    b.writeDoubleBE(times[positions[i]!]!, i * 12);
    b.writeUInt32BE(positions[i]!, i * 12 + 8);
  }
  return b;
}

/** Calls `fn` for each entry of an encoded posting list. */
export function forEachPosting(b: Uint8Array, fn: (t: number, index: number) => void): void {
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  for (let o = 0; o + 12 <= b.byteLength; o += 12) fn(v.getFloat64(o), v.getUint32(o + 8));
}

/** The positions of a record's events that share one value: one number until a second event has it. */
type Positions = number | number[];

function note(into: Map<string, Positions>, value: string, position: number): void {
  const seen = into.get(value);
  if (seen === undefined) into.set(value, position);
  else if (typeof seen === 'number') into.set(value, [seen, position]);
  else seen.push(position);
}

/** Calls `fn` for each second (bucket) the events at `positions` fall in, with theirs, in order. */
function bySecond(
  positions: Positions,
  buckets: Float64Array,
  fn: (bucket: number, positions: number[]) => void,
): void {
  if (typeof positions === 'number') return fn(buckets[positions]!, [positions]);
  const first = buckets[positions[0]!]!;
  if (positions.every((p) => buckets[p] === first)) return fn(first, positions);
  const seconds = new Map<number, number[]>();
  for (const p of positions) {
    const b = buckets[p]!;
    const list = seconds.get(b);
    if (list) list.push(p);
    else seconds.set(b, [p]);
  }
  for (const [b, list] of seconds) fn(b, list);
}

/**
 * The read side's evidence index (folded behind the writer, in its own LMDB environment): events
 * by time and by category, class, adapter and entity key. One entry holds the events of one record
 * that share a value within one second: `[second, seq]` in the time database and
 * `[dimension, value, second, seq]` in the dimension database, its value their times and positions
 * in the record. A record of a thousand events from one source writes a few entries per value
 * instead of one per event and value; an event is then found by reading the entries of its second
 * (src/projections/evidence-query.ts). The write side refuses ids already stored, so every event of
 * a record is new here.
 */
export const evidenceReadIndex = instanceIndex({
  name: 'evidence-read',
  version: 2,
  dbs: [EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim],
  readDbs: [],
  binaryDbs: [EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim],
  recordOf: (_db, key) => (key as Array<string | number>).at(-1) as number,
  folds: CARRYING_EVENT_TYPES,
  apply(record, _read, write) {
    // The read side gives this index evidence records whose events hold only ReadSideEvent's fields.
    const events: readonly ReadSideEvent[] = eventsCarried(record);
    const n = events.length;
    if (n === 0) return;
    const times = new Float64Array(n);
    const buckets = new Float64Array(n);
    const dims: Record<EventDimension, Map<string, Positions>> = {
      category: new Map(),
      class: new Map(),
      adapter: new Map(),
      entity: new Map(),
    };
    for (let i = 0; i < n; i++) {
      const e = events[i]!;
      times[i] = eventTimeMs(e);
      buckets[i] = bucketOf(times[i]!);
      note(dims.category, e.category, i);
      note(dims.class, e.class, i);
      note(dims.adapter, e.source.adapter, i);
      const keys = e.entityKeys;
      const seen = seenKeys(keys);
      for (let k = 0; k < keys.length; k++) if (firstOfKey(keys, k, seen)) note(dims.entity, keys[k]!, i);
    }
    const all = n === 1 ? 0 : Array.from({ length: n }, (_, i) => i);
    bySecond(all, buckets, (b, ps) => write.put(EVIDENCE_DBS.byTime, [b, record.seq], encodePostings(times, ps)));
    for (const dim of EVENT_DIMENSIONS) {
      for (const [value, positions] of dims[dim]) {
        bySecond(positions, buckets, (b, ps) =>
          write.put(EVIDENCE_DBS.byDim, [dim, value, b, record.seq], encodePostings(times, ps)),
        );
      }
    }
  },
});
