import { nanosFromEpochNanos } from '../../kernel/time.js';
import { type Decoded, fail, isAbsent, ok } from './decoded.js';

/**
 * Readers for the scalar LogRecord fields of logs.proto in their OTLP/JSON encoding: fixed64
 * timestamps, the SeverityNumber enum, fixed32/uint32 counters and hex trace context ids.
 */

/**
 * Event severity 0..10 by OTLP severityNumber 1..24 (index 0 = UNSPECIFIED has no severity).
 * TRACE 0, DEBUG 1, INFO 2 (INFO2-4, e.g. syslog notice, 3), WARN 4 (WARN2-4 5),
 * ERROR 6, ERROR2 7, ERROR3-4 8, FATAL 9, FATAL2-4 10.
 */
export const SEVERITY_BY_NUMBER: readonly (number | undefined)[] = [
  undefined,
  0,
  0,
  0,
  0,
  1,
  1,
  1,
  1,
  2,
  3,
  3,
  3,
  4,
  5,
  5,
  5,
  6,
  7,
  8,
  8,
  9,
  10,
  10,
  10,
];

const LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'FATAL'];
const ENUM_NAME = /^SEVERITY_NUMBER_(TRACE|DEBUG|INFO|WARN|ERROR|FATAL)([234]?)$/;
const UINT32_MAX = 0xffff_ffff;

/** Epoch nanoseconds of a fixed64 timestamp (decimal string or JSON number); `0` or absent means unknown. */
export function readUnixNano(value: unknown, path: string): Decoded<bigint | undefined> {
  if (isAbsent(value)) return ok(undefined);
  let ns: bigint | undefined;
  // A JSON number above 2^53 was already rounded by the JSON parser: BigInt reads the double exactly
  // as it arrived, so the error is what the parser introduced (at most 256 ns today), nothing more.
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0)
    ns = nanosFromEpochNanos(BigInt(value).toString());
  else if (typeof value === 'string' && /^\d{1,20}$/.test(value)) ns = nanosFromEpochNanos(value);
  if (ns === undefined) return fail(path, 'expected nanoseconds since the epoch as a decimal string');
  return ok(ns === 0n ? undefined : ns);
}

/**
 * The SeverityNumber enum as an integer 0..24. OTLP/JSON requires integers; the enum name
 * (`SEVERITY_NUMBER_WARN`) that generic protobuf JSON writers emit is tolerated and read as its number.
 */
export function readSeverityNumber(value: unknown, path: string): Decoded<number | undefined> {
  if (isAbsent(value)) return ok(undefined);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 24) return ok(value);
  if (value === 'SEVERITY_NUMBER_UNSPECIFIED') return ok(0);
  const m = typeof value === 'string' ? ENUM_NAME.exec(value) : null;
  if (m) return ok(LEVELS.indexOf(m[1]!) * 4 + 1 + (m[2] ? Number(m[2]) - 1 : 0));
  return fail(path, 'expected an integer 0..24 (OTLP SeverityNumber)');
}

/** A fixed32/uint32 field (`flags`, `droppedAttributesCount`) as a JSON number or decimal string. */
export function readUint32(value: unknown, path: string): Decoded<number | undefined> {
  if (isAbsent(value)) return ok(undefined);
  const n = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
  if (typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= UINT32_MAX) return ok(n);
  return fail(path, 'expected an unsigned 32-bit integer');
}

/** An optional string field. */
export function readString(value: unknown, path: string): Decoded<string | undefined> {
  if (isAbsent(value)) return ok(undefined);
  return typeof value === 'string' ? ok(value) : fail(path, 'expected a string');
}

/**
 * A trace or span id as lower-case hex, or undefined when it is no valid id. Per logs.proto an
 * empty, all-zero or wrong-length id means "no trace context", so such ids are dropped, not refused.
 */
export function readHexId(value: unknown, hexDigits: 32 | 16): string | undefined {
  if (typeof value !== 'string' || value.length !== hexDigits || !/^[0-9a-fA-F]+$/.test(value)) return undefined;
  return /^0+$/.test(value) ? undefined : value.toLowerCase();
}
