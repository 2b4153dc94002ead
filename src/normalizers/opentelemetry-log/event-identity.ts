import { deterministicEventId, rawDigest, rawReference } from '../record-id.js';

/** Where one event comes from: its id, `source.recordId` and `rawReference`. */
export interface EventPlace {
  readonly id: string;
  readonly recordId: string;
  readonly rawReference: string;
}

/** Gives the place of each event derived from one raw record. */
export type PlaceOf = (part?: number, path?: string) => EventPlace;

/**
 * The identity of a raw record, hashed once. The strings are exactly those of
 * `deterministicEventId(adapter, logType, record, part)` and `rawReference(record, path)`; hashing once
 * keeps a request with thousands of LogRecords linear instead of re-hashing the whole request per event.
 */
export function placesOf(adapter: string, logType: string, record: unknown): PlaceOf {
  const baseId = deterministicEventId(adapter, logType, record);
  const digest = rawDigest(record);
  const baseRef = rawReference(record);
  return (part, path) => ({
    id: part === undefined ? baseId : `${baseId}:${part}`,
    recordId: path ? `${digest}#${path}` : digest,
    rawReference: path ? `${baseRef}#${path}` : baseRef,
  });
}
