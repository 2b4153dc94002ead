import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal values give equal bytes whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  // Hot path of ingestion (every event's digest): plain loops, no intermediate arrays.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + stableStringify(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let sorted = true;
  for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!;
  if (!sorted) keys.sort();
  let out = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    out += `${first ? '' : ','}${JSON.stringify(k)}:${stableStringify(v)}`;
    first = false;
  }
  return `${out}}`;
}

/** SHA-256 hex digest of a raw record's stable JSON: the record's identity in the log. */
export function rawDigest(record: unknown): string {
  return createHash('sha256').update(stableStringify(record)).digest('hex');
}

/**
 * The deterministic event id for one event derived from a raw record:
 * `<adapter>:<first 32 hex of sha256(adapter, logType, record)>` plus `:<n>` when a record gives several events.
 */
export function deterministicEventId(adapter: string, logType: string, record: unknown, part?: number): string {
  const h = createHash('sha256').update(adapter).update('\0').update(logType).update('\0')
    .update(stableStringify(record)).digest('hex').slice(0, 32);
  return part === undefined ? `${adapter}:${h}` : `${adapter}:${h}:${part}`;
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
  const stable = stableStringify(record);
  const digest = createHash('sha256').update(stable).digest('hex');
  const baseId = `${adapter}:${createHash('sha256').update(adapter).update('\0').update(logType).update('\0').update(stable).digest('hex').slice(0, 32)}`;
  const baseRef = `raw:sha256:${digest}`;
  return (part, path) => ({
    id: part === undefined ? baseId : `${baseId}:${part}`,
    recordId: path ? `${digest}#${path}` : digest,
    rawReference: path ? `${baseRef}#${path}` : baseRef,
  });
}
