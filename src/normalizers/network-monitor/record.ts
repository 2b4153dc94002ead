import { isIP } from 'node:net';
import { nanosFromEpochMillis, nanosFromEpochSeconds, nanosFromIso } from '../../kernel/time.js';

/** One Zeek JSON log line, as parsed: flat, dotted keys (`id.orig_h` is one key). */
export type ZeekRecord = Readonly<Record<string, unknown>>;

/** The connection fields most Zeek logs share, read and checked once before the per-log mapping. */
export interface ZeekConn {
  readonly origH?: string;
  readonly origP?: number;
  readonly respH?: string;
  readonly respP?: number;
  readonly proto?: string;
  readonly uid?: string;
}

/** Longest value copied out of a record into derived fields; longer text stays in attributes only. */
const MAX_DERIVED_TEXT = 256;
/** Most list items copied out of one record field (fuid lists, answers, SANs). */
const MAX_DERIVED_ITEMS = 64;
/** An integer above this is epoch milliseconds: as seconds it would be past the year 5138. */
const MILLIS_THRESHOLD = 1e11;

/**
 * A string field as sent, when it is a non-empty string short enough to copy into a derived field;
 * `null` (Zeek's `json_include_unset_fields`) and other types read as absent.
 */
export function text(record: ZeekRecord, key: string): string | undefined {
  return shortText(record[key]);
}

/** The value itself when it is a non-empty string of bounded length, else undefined. */
export function shortText(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_DERIVED_TEXT ? value : undefined;
}

/** A numeric field when it is a finite JSON number, else undefined. */
export function num(record: ZeekRecord, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** A boolean field, else undefined (absent is not false in Zeek). */
export function flag(record: ZeekRecord, key: string): boolean | undefined {
  const value = record[key];
  return typeof value === 'boolean' ? value : undefined;
}

/** The short string items of a list field (a Zeek set or vector), at most a bounded number. */
export function texts(record: ZeekRecord, key: string): string[] {
  const value = record[key];
  if (!Array.isArray(value)) return [];
  const out: string[] = [];
  for (const item of value.slice(0, MAX_DERIVED_ITEMS)) {
    const s = shortText(item);
    if (s !== undefined) out.push(s);
  }
  return out;
}

/** The value when it is a textual IP address (v4 or v6), else undefined. */
export function ipText(value: unknown): string | undefined {
  const s = shortText(value);
  return s !== undefined && isIP(s) !== 0 ? s : undefined;
}

/** The value when it is an integer port 0..65535, else undefined. */
export function portNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 65535 ? value : undefined;
}

/**
 * Epoch nanoseconds of a Zeek `ts`: a JSON number is epoch seconds (float, microsecond digits kept)
 * unless it is an integer above 1e11, which is epoch milliseconds (`JSON::TS_MILLIS`); a string must be
 * an RFC 3339 date-time (`JSON::TS_ISO8601`). Anything else is undefined.
 */
export function nanosFromZeekTime(value: unknown): bigint | undefined {
  if (typeof value === 'number') {
    return Number.isInteger(value) && value > MILLIS_THRESHOLD
      ? nanosFromEpochMillis(value)
      : nanosFromEpochSeconds(value);
  }
  return typeof value === 'string' ? nanosFromIso(value) : undefined;
}

/** Whether a field is absent in Zeek's sense: missing key or an explicit `null` unset field. */
function isUnset(value: unknown): boolean {
  return value === undefined || value === null;
}

/**
 * Reads and checks the `id.*` 5-tuple, `proto` and `uid`: the result, or an error naming the field
 * whose type is wrong (a wrong type here means the record is not the log it claims to be).
 */
export function readConn(record: ZeekRecord): ZeekConn | string {
  const origH = record['id.orig_h'],
    respH = record['id.resp_h'];
  const origP = record['id.orig_p'],
    respP = record['id.resp_p'];
  if (!isUnset(origH) && ipText(origH) === undefined) return 'id.orig_h: expected an IP address string';
  if (!isUnset(origP) && portNumber(origP) === undefined) return 'id.orig_p: expected a port number 0..65535';
  if (!isUnset(respH) && ipText(respH) === undefined) return 'id.resp_h: expected an IP address string';
  if (!isUnset(respP) && portNumber(respP) === undefined) return 'id.resp_p: expected a port number 0..65535';
  const proto = text(record, 'proto');
  return (
    compact({
      origH: ipText(origH),
      origP: portNumber(origP),
      respH: ipText(respH),
      respP: portNumber(respP),
      proto: proto?.toLowerCase(),
      uid: text(record, 'uid'),
    }) ?? {}
  );
}

/** A copy of an object without its undefined values, or undefined when nothing is left. */
export function compact<T extends object>(obj: T): T | undefined {
  const out: Record<string, unknown> = {};
  let any = false;
  for (const [key, value] of Object.entries(obj)) {
    if (value === undefined) continue;
    out[key] = value;
    any = true;
  }
  return any ? (out as T) : undefined;
}

/** The list itself, or undefined when it is empty (so the key is omitted). */
export function nonEmpty<T>(list: T[]): T[] | undefined {
  return list.length > 0 ? list : undefined;
}

/** A data value turned into one lower_snake_case word (`SMB::FILE_OPEN` -> `smb_file_open`), bounded. */
export function snakeWord(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 64);
}

/** The part after the last `::` of a Zeek enum value (`Tunnel::TEREDO` -> `TEREDO`). */
export function enumName(value: string): string {
  const at = value.lastIndexOf('::');
  return at < 0 ? value : value.slice(at + 2);
}
