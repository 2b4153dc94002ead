import { MAX_JSON_DEPTH, clampDepth } from '../kernel/json/depth.js';
import type { LogRecord } from '../kernel/record.js';

/**
 * One line of `vigil log export`: the record as JSON (bigints as strings, bytes as base64, values
 * nested past the edge's bound clamped), and with `raw` the base64 of its exact stored bytes, which
 * an offline verifier hashes into the chain and the Merkle tree.
 */
export function exportLine(record: LogRecord, raw?: Uint8Array): string {
  return exportLineParts(record, raw).join('');
}

/**
 * {@link exportLine} as the strings that make it up, in order: an archive writes them one after
 * another into its buffer, which spares joining a line of a megabyte or more into one string first
 * (an archive is a whole segment of these, so this is most of an expiry's cost).
 */
export function exportLineParts(record: LogRecord, raw?: Uint8Array): string[] {
  // Almost every record is plain JSON within the bound: serialized without a replacer, the engine's
  // fast path. The record has no `raw` of its own, so `raw` goes last, as in `{ ...record, raw }`.
  if (plainWithin(record, MAX_JSON_DEPTH)) {
    const json = JSON.stringify(record);
    return raw
      ? [
          json.slice(0, -1),
          ',"raw":"',
          Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64'),
          '"}\n',
        ]
      : [json, '\n'];
  }
  const shown = raw
    ? { ...(clampDepth(record) as object), raw: Buffer.from(raw).toString('base64') }
    : clampDepth(record);
  return [
    JSON.stringify(shown, (_k, val) =>
      typeof val === 'bigint' ? val.toString() : val instanceof Uint8Array ? Buffer.from(val).toString('base64') : val,
    ),
    '\n',
  ];
}

/** Whether `value` nests at most `max` levels and holds no bigint or bytes (iterative). */
function plainWithin(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return typeof value !== 'bigint';
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (ArrayBuffer.isView(node)) return false;
    for (const child of Object.values(node)) {
      if (typeof child === 'bigint') return false;
      if (typeof child !== 'object' || child === null) continue;
      if (depth + 1 > max) return false;
      stack.push([child, depth + 1]);
    }
  }
  return true;
}
