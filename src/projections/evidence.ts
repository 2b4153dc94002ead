import { eventsOf } from '../events/record-types.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import { stableStringify } from '../normalizers/record-id.js';
import { nanosFromIso } from '../normalizers/time.js';
import { createHash } from 'node:crypto';
import type { IndexProjection, IndexReader } from './types.js';

/** One stored event: its content digest (for idempotency), the record that carried it, the event. */
export interface StoredEvent {
  readonly d: string;
  readonly s: number;
  readonly e: NormalizedEvent;
}

/** The dimensions `GET /api/v1/events` can filter on through an index. */
export const EVENT_DIMENSIONS = ['category', 'class', 'adapter', 'entity'] as const;
/** One indexed dimension. */
export type EventDimension = (typeof EVENT_DIMENSIONS)[number];

/** Database names of the evidence index. */
export const EVIDENCE_DBS = { byId: 'ev', byTime: 'ev-time', byDim: 'ev-dim' } as const;

/** The content digest that decides whether a re-sent event id is a duplicate or a conflict. */
export function eventDigest(event: NormalizedEvent): string {
  return createHash('sha256').update(stableStringify(event)).digest('hex').slice(0, 32);
}

/** Milliseconds since the epoch of an event time (NaN-free: 0 for the unparseable, which the schema prevents). */
export function eventTimeMs(event: NormalizedEvent): number {
  const ns = nanosFromIso(event.time);
  return ns === undefined ? 0 : Number(ns / 1000n) / 1000;
}

/** The stored event with this id, including events of records not yet committed. */
export function lookupEvent(index: IndexReader, id: string): StoredEvent | undefined {
  return index.get(EVIDENCE_DBS.byId, id) as StoredEvent | undefined;
}

function dimensionValues(e: NormalizedEvent): Array<[EventDimension, string]> {
  const out: Array<[EventDimension, string]> = [['category', e.category], ['class', e.class], ['adapter', e.source.adapter]];
  for (const k of new Set(e.entityKeys)) out.push(['entity', k]);
  return out;
}

/**
 * The evidence index: every accepted event by id, by time, and by category, class, adapter and
 * entity key, in LMDB (it outgrows the heap). Re-applying an already stored id changes nothing.
 */
export const evidenceIndex: IndexProjection = {
  name: 'evidence',
  version: 1,
  dbs: Object.values(EVIDENCE_DBS),
  apply(record, read, write) {
    for (const e of eventsOf(record.type, record.data)) {
      if (read.get(EVIDENCE_DBS.byId, e.id) !== undefined) continue;
      const t = eventTimeMs(e);
      write.put(EVIDENCE_DBS.byId, e.id, { d: eventDigest(e), s: record.seq, e } satisfies StoredEvent);
      write.put(EVIDENCE_DBS.byTime, [t, e.id], null);
      for (const [dim, value] of dimensionValues(e)) write.put(EVIDENCE_DBS.byDim, [dim, value, t, e.id], null);
    }
  },
};
