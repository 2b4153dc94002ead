import type { LogRecord, NewRecord } from '../kernel/record.js';
import type { LogHead } from './event-log.js';
import { encodeRecord, hashBytes } from './record.js';

/** A batch linked into the chain: its records, their encoded bytes, and the head after it. */
export interface LinkedBatch {
  readonly records: LogRecord[];
  readonly bytes: Uint8Array[];
  readonly head: LogHead;
}

/**
 * Links a batch behind `head`, for every log backend alike: each record gets the next seq and, as
 * `prev`, the SHA-256 of the encoded record before it. Synchronous, so batches staged one after
 * another chain in the order they were staged.
 */
export function linkBatch(batch: readonly NewRecord[], head: LogHead): LinkedBatch {
  const records: LogRecord[] = [];
  const bytes: Uint8Array[] = [];
  let { seq, hash } = head;
  for (const r of batch) {
    const record: LogRecord = {
      seq: ++seq,
      at: r.at,
      type: r.type,
      ...(r.actor ? { actor: r.actor } : {}),
      data: r.data,
      prev: hash,
    };
    const encoded = encodeRecord(record);
    hash = hashBytes(encoded);
    records.push(record);
    bytes.push(encoded);
  }
  return { records, bytes, head: { seq, hash } };
}
