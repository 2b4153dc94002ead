import type { EventLog, LogCut } from './event-log.js';
import { decodeRecord, hashBytes } from './record.js';
import { GENESIS_HASH, type LogRecord } from '../kernel/record.js';

/** The result of walking the chain: ok, or the first bad record and why. */
export type VerifyResult =
  | { readonly ok: true; readonly records: number; readonly head: string; readonly from?: number }
  | { readonly ok: false; readonly records: number; readonly badSeq: number; readonly reason: string };

/**
 * Walks the whole log: seq must be dense from 1 (from the cut when retention removed a prefix,
 * the first record linking to the cut's hash), each record's `prev` must be the hash of the
 * bytes before it, and the last hash must equal the recorded head. A changed, removed or
 * reordered record breaks one of these at the first place it happened. `check` looks at each
 * decoded record as it passes (why it is wrong, or undefined), in the same walk.
 */
export function verifyLog(
  log: Pick<EventLog, 'readRaw' | 'head'>,
  cut?: LogCut,
  check?: (record: LogRecord) => string | undefined,
): VerifyResult {
  let expected = cut?.firstSeq ?? 1;
  let prev = cut?.prevHash ?? GENESIS_HASH;
  for (const { seq, bytes } of log.readRaw(1)) {
    const fail = (reason: string): VerifyResult => ({
      ok: false,
      records: expected - (cut?.firstSeq ?? 1),
      badSeq: expected,
      reason,
    });
    if (seq !== expected)
      return fail(
        seq > expected ? `record ${expected} is missing (next stored is ${seq})` : `record ${seq} out of order`,
      );
    let record;
    try {
      record = decodeRecord(bytes);
    } catch {
      return fail('record bytes do not decode');
    }
    if (record.seq !== seq) return fail(`record stored under ${seq} says it is ${record.seq}`);
    if (record.prev !== prev)
      return fail(
        cut && seq === cut.firstSeq
          ? `chain broken: record ${seq} does not link to the hash recorded at the cut`
          : `chain broken: record ${seq} does not link to the hash of record ${seq - 1}`,
      );
    const wrong = check?.(record);
    if (wrong !== undefined) return fail(wrong);
    prev = hashBytes(bytes);
    expected++;
  }
  const head = log.head();
  const first = cut?.firstSeq ?? 1;
  // The recorded head is past the last stored record: the tail was cut, and the first record it lost is named.
  if (head.seq > expected - 1) {
    return {
      ok: false,
      records: expected - first,
      badSeq: expected,
      reason: `records ${expected} to ${head.seq} are missing: the log's recorded head is ${head.seq}`,
    };
  }
  if (head.seq !== expected - 1 || head.hash !== prev) {
    return {
      ok: false,
      records: expected - first,
      badSeq: expected - 1,
      reason: 'the last record does not match the recorded head',
    };
  }
  return { ok: true, records: expected - first, head: prev, ...(cut ? { from: first } : {}) };
}
