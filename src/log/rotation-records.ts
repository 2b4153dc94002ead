/**
 * Finding the log's `LogKeyRotated` records in stored bytes: what `vigil log verify` and an offline
 * verifier of an export read the chain of keys from (src/log/key-rotation.ts).
 */
import type { LogRecord } from '../kernel/record.js';
import { decodeRecord } from './record.js';
import { asRecord, carriedBy } from './retention/plan.js';

const MARK = Buffer.from('LogKeyRotated');

/** The rotation notes a decoded record holds: its own, or those of the records a retention cut carried in it. */
export function rotationNotesOf(record: LogRecord): string[] {
  if (record.type === 'LogKeyRotated') {
    const note = (record.data as { note?: unknown } | undefined)?.note;
    return typeof note === 'string' ? [note] : [];
  }
  return (carriedBy(record) ?? []).flatMap((c) => rotationNotesOf(asRecord(c)));
}

/**
 * The rotation notes in a record's stored bytes. Only bytes that hold the type's name are decoded (a
 * byte search costs far less than a decode, and nearly every record holds none).
 */
export function rotationNotesIn(bytes: Uint8Array): string[] {
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(MARK) < 0) return [];
  try {
    return rotationNotesOf(decodeRecord(bytes));
  } catch {
    return [];
  }
}
