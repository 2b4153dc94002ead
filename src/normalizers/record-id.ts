import { createHash } from 'node:crypto';
import { canonicalJson } from '../kernel/canonical-json.js';

/** SHA-256 hex digest of a raw record's stable JSON: the record's identity in the log. */
export function rawDigest(record: unknown): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

function idOf(adapter: string, logType: string, digest: string): string {
  return `${adapter}:${logType ? `${logType}:` : ''}${digest.slice(0, 32)}`;
}

/**
 * The deterministic event id for one event derived from a raw record:
 * `<adapter>:[<logType>:]<first 32 hex of the record's digest>`, plus `:<n>` when a record gives several events.
 */
export function deterministicEventId(adapter: string, logType: string, record: unknown, part?: number): string {
  const id = idOf(adapter, logType, rawDigest(record));
  return part === undefined ? id : `${id}:${part}`;
}

/** The `rawReference` of an event: where its original record is kept in the local log. */
export function rawReference(record: unknown, path?: string): string {
  return `raw:sha256:${rawDigest(record)}${path ? `#${path}` : ''}`;
}

/** Where one event comes from: its id, `source.recordId` and `rawReference`. */
export interface EventPlace {
  readonly id: string;
  readonly recordId: string;
  readonly rawReference: string;
}

/** Gives the place of each event derived from one raw record. */
export type PlaceOf = (part?: number, path?: string) => EventPlace;

/**
 * The identity of a raw record, serialized and hashed once: the strings are exactly those of
 * `deterministicEventId(adapter, logType, record, part)`, `rawDigest(record)` (+ `#path`) and
 * `rawReference(record, path)`.
 */
export function placesOf(adapter: string, logType: string, record: unknown): PlaceOf {
  const digest = rawDigest(record);
  const baseId = idOf(adapter, logType, digest);
  const baseRef = `raw:sha256:${digest}`;
  return (part, path) => ({
    id: part === undefined ? baseId : `${baseId}:${part}`,
    recordId: path ? `${digest}#${path}` : digest,
    rawReference: path ? `${baseRef}#${path}` : baseRef,
  });
}
