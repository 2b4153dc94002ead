import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal values give equal bytes whatever their key order. */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const s = JSON.stringify(value);
    return s === undefined ? 'null' : s;
  }
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj).filter((k) => obj[k] !== undefined).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`).join(',')}}`;
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
