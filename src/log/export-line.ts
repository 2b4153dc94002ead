import { clampDepth } from '../json/depth.js';
import type { LogRecord } from './record.js';

/**
 * One line of `vigil log export`: the record as JSON (bigints as strings, bytes as base64, values
 * nested past the edge's bound clamped), and with `raw` the base64 of its exact stored bytes, which
 * an offline verifier hashes into the chain and the Merkle tree.
 */
export function exportLine(record: LogRecord, raw?: Uint8Array): string {
  const shown = raw ? { ...(clampDepth(record) as object), raw: Buffer.from(raw).toString('base64') } : clampDepth(record);
  return `${JSON.stringify(shown, (_k, val) => (typeof val === 'bigint' ? val.toString() : val instanceof Uint8Array ? Buffer.from(val).toString('base64') : val))}\n`;
}
