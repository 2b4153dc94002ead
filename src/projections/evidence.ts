import { eventsCarried, eventsOfRecord } from '../events/record-types.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import { stableStringify } from '../normalizers/record-id.js';
import { nanosFromIso } from '../normalizers/time.js';
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
    return stableStringify(a) === stableStringify(b);
  } catch (err) {
    // A stored event nested deeper than the serializer can follow (an old log) differs from any
    // event the edge admits today.
    if (err instanceof RangeError) return false;
    throw err;
  }
}

/** Milliseconds since the epoch of an event time (NaN-free: 0 for the unparseable, which the schema prevents). */
export function eventTimeMs(event: NormalizedEvent): number {
  const ns = nanosFromIso(event.time);
  return ns === undefined ? 0 : Number(ns / 1000n) / 1000;
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
export function lookupEvent(models: EvidenceLookup, id: string, decoded = new Map<number, readonly NormalizedEvent[]>()): NormalizedEvent | undefined {
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

function dimensionValues(e: NormalizedEvent): Array<[EventDimension, string]> {
  const out: Array<[EventDimension, string]> = [['category', e.category], ['class', e.class], ['adapter', e.source.adapter]];
  for (const k of new Set(e.entityKeys)) out.push(['entity', k]);
  return out;
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
  apply(record, read, write) {
    const events = eventsCarried(record);
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      if (read.get(EVIDENCE_DBS.byId, e.id) !== undefined) continue;
      write.put(EVIDENCE_DBS.byId, e.id, encodeStored({ seq: record.seq, index: i }));
    }
  },
});

/**
 * The read side's evidence index (folded behind the writer, in its own LMDB environment): events
 * by time and by category, class, adapter and entity key, each key's value the event's place in
 * the log. The write side refuses ids already stored, so every event of a record is new here.
 */
export const evidenceReadIndex = instanceIndex({
  name: 'evidence-read',
  version: 1,
  dbs: [EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim],
  readDbs: [],
  binaryDbs: [EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim],
  recordOf: (_db, _key, value) => decodeStored(value as Uint8Array).seq,
  apply(record, _read, write) {
    const events = eventsCarried(record);
    for (let i = 0; i < events.length; i++) {
      const e = events[i]!;
      const t = eventTimeMs(e);
      const at = encodeStored({ seq: record.seq, index: i });
      write.put(EVIDENCE_DBS.byTime, [t, e.id], at);
      for (const [dim, value] of dimensionValues(e)) write.put(EVIDENCE_DBS.byDim, [dim, value, t, e.id], at);
    }
  },
});
