/**
 * A strict RFC 5424 parser (section 6 ABNF): `HEADER SP STRUCTURED-DATA [SP MSG]`. It accepts only
 * what the grammar allows, so RFC 3164 lines, shifted fields and lenient encodings are refused with
 * an error naming the part and column instead of being guessed at.
 */
import { Buffer } from 'node:buffer';
import { nanosFromIso } from '../../kernel/time.js';
import {
  decodeUtf8,
  describeUnit,
  failAt,
  latin1,
  loneSurrogateIndex,
  parseStructuredData,
  syslogSource,
  type Failure,
  type SdElement,
  type SyslogSource,
} from './rfc5424-structured-data.js';

export type { SdElement } from './rfc5424-structured-data.js';

/** One parsed RFC 5424 message; NILVALUE header fields are null. */
export interface SyslogMessage {
  readonly pri: number;
  readonly facility: number;
  readonly severity: number;
  readonly version: number;
  /** The TIMESTAMP text as sent, null for NILVALUE. */
  readonly timestamp: string | null;
  /** Epoch nanoseconds of TIMESTAMP, null for NILVALUE. */
  readonly timestampNanos: bigint | null;
  readonly hostname: string | null;
  readonly appName: string | null;
  readonly procId: string | null;
  readonly msgId: string | null;
  /** [] for NILVALUE; PARAM-VALUEs unescaped. */
  readonly structuredData: readonly SdElement[];
  /** MSG without a leading BOM; null when absent. */
  readonly message: string | null;
  /** MSG started with the UTF-8 BOM. */
  readonly bom: boolean;
}

/** The outcome of parsing one message: the parts, or an error naming the part and column. */
export type Rfc5424Result =
  { readonly ok: true; readonly message: SyslogMessage } | { readonly ok: false; readonly error: string };

/** Largest input accepted, in UTF-8 bytes; RFC 5424 only asks receivers for 2048. */
export const MAX_MESSAGE_BYTES = 65536;

const SP = 0x20;
const LT = 0x3c;
const GT = 0x3e;
const ZERO = 0x30;
const NILVALUE = '-';

type Step<T> = { readonly ok: true; readonly value: T } | Failure;
type Header = Omit<SyslogMessage, 'structuredData' | 'message' | 'bom'>;
interface Cursor {
  readonly src: SyslogSource;
  pos: number;
}

/**
 * Parses one RFC 5424 message. Accepts a JS string (from JSON) or raw bytes. Never throws.
 * Error columns count bytes for byte input and UTF-16 code units for string input.
 */
export function parseRfc5424(input: string | Uint8Array): Rfc5424Result {
  const src = syslogSource(input);
  if (src === undefined) return { ok: false, error: 'MSG: input is neither a string nor bytes' };
  if (utf8Length(input) > MAX_MESSAGE_BYTES) {
    return { ok: false, error: `MSG: message longer than ${MAX_MESSAGE_BYTES} bytes` };
  }
  const cur: Cursor = { src, pos: 0 };
  const header = readHeader(cur);
  if (!header.ok) return header;
  const sd = parseStructuredData(src, cur.pos);
  if (!sd.ok) return sd;
  cur.pos = sd.end;
  if (cur.pos === src.length) {
    return { ok: true, message: { ...header.value, structuredData: sd.value, message: null, bom: false } };
  }
  // Also what refuses a second message glued on after a newline: only SP may follow STRUCTURED-DATA.
  if (src.code(cur.pos) !== SP) {
    return failAt('STRUCTURED-DATA', `expected SP before MSG but found ${describeUnit(src.code(cur.pos))}`, cur.pos);
  }
  const msg = readMessage(input, cur.pos + 1);
  if (!msg.ok) return msg;
  return { ok: true, message: { ...header.value, structuredData: sd.value, ...msg.value } };
}

function readHeader(cur: Cursor): Step<Header> {
  const pri = readPri(cur);
  if (!pri.ok) return pri;
  const version = readVersion(cur);
  if (!version.ok) return version;
  const time = readTimestamp(cur);
  if (!time.ok) return time;
  const hostname = readField(cur, 'HOSTNAME', 255, 'APP-NAME');
  if (!hostname.ok) return hostname;
  const appName = readField(cur, 'APP-NAME', 48, 'PROCID');
  if (!appName.ok) return appName;
  const procId = readField(cur, 'PROCID', 128, 'MSGID');
  if (!procId.ok) return procId;
  const msgId = readField(cur, 'MSGID', 32, 'STRUCTURED-DATA');
  if (!msgId.ok) return msgId;
  return {
    ok: true,
    value: {
      pri: pri.value,
      facility: pri.value >> 3,
      severity: pri.value & 7,
      version: version.value,
      timestamp: time.value?.text ?? null,
      timestampNanos: time.value?.nanos ?? null,
      hostname: hostname.value,
      appName: appName.value,
      procId: procId.value,
      msgId: msgId.value,
    },
  };
}

/** PRI = "<" PRIVAL ">", PRIVAL 1..3 digits, 0..191, no leading zero. */
function readPri(cur: Cursor): Step<number> {
  const { src } = cur;
  if (src.length === 0) return failAt('PRI', 'empty input', 0);
  if (src.code(0) !== LT) return failAt('PRI', `expected '<' but found ${describeUnit(src.code(0))}`, 0);
  const end = digitsEnd(src, 1);
  if (end === 1) return failAt('PRI', 'expected 1 to 3 digits', 1);
  if (end - 1 > 3) return failAt('PRI', 'more than 3 digits', 1);
  if (src.code(1) === ZERO && end > 2) return failAt('PRI', 'leading zero', 1);
  const value = Number(src.ascii(1, end));
  if (value > 191) return failAt('PRI', `value ${value} out of range 0..191`, 1);
  if (end >= src.length || src.code(end) !== GT) return failAt('PRI', "expected '>'", end);
  cur.pos = end + 1;
  return { ok: true, value };
}

/** VERSION = NONZERO-DIGIT 0*2DIGIT: the grammar allows up to 999 although only 1 is defined. */
function readVersion(cur: Cursor): Step<number> {
  const { src, pos: start } = cur;
  const end = digitsEnd(src, start);
  if (end === start) return failAt('VERSION', 'expected a digit', start);
  if (src.code(start) === ZERO) return failAt('VERSION', 'must start with a nonzero digit', start);
  if (end - start > 3) return failAt('VERSION', 'more than 3 digits', start);
  cur.pos = end;
  const sp = expectSp(cur, 'VERSION', 'TIMESTAMP');
  return sp ?? { ok: true, value: Number(src.ascii(start, end)) };
}

function readTimestamp(cur: Cursor): Step<{ readonly text: string; readonly nanos: bigint } | null> {
  const start = cur.pos;
  const token = readToken(cur, 'TIMESTAMP', Infinity);
  if (!token.ok) return token;
  // Validate before looking for the SP so a truncated TIMESTAMP is reported as such.
  const nanos = token.value === NILVALUE ? null : timestampNanos(token.value, start);
  if (nanos !== null && !nanos.ok) return nanos;
  const sp = expectSp(cur, 'TIMESTAMP', 'HOSTNAME');
  if (sp) return sp;
  return { ok: true, value: nanos === null ? null : { text: token.value, nanos: nanos.value } };
}

/** A header field followed by its SP; null for NILVALUE ('-' as a whole token: '-web1west' is a hostname). */
function readField(cur: Cursor, part: string, max: number, next: string): Step<string | null> {
  const token = readToken(cur, part, max);
  if (!token.ok) return token;
  const sp = expectSp(cur, part, next);
  if (sp) return sp;
  return { ok: true, value: token.value === NILVALUE ? null : token.value };
}

/** A run of 1..max PRINTUSASCII characters. */
function readToken(cur: Cursor, part: string, max: number): Step<string> {
  const { src, pos: start } = cur;
  let end = start;
  while (end < src.length && isPrintUsAscii(src.code(end))) end += 1;
  if (end === start) {
    if (end >= src.length) return failAt(part, 'missing', end);
    return failAt(part, `expected PRINTUSASCII but found ${describeUnit(src.code(end))}`, end);
  }
  if (end - start > max) return failAt(part, `longer than ${max} characters`, start);
  cur.pos = end;
  return { ok: true, value: src.ascii(start, end) };
}

/** Consumes the single SP after `part`; at the end of input it is `next` that is missing. */
function expectSp(cur: Cursor, part: string, next: string): Failure | undefined {
  const { src, pos } = cur;
  if (pos >= src.length) return failAt(next, 'missing', pos);
  if (src.code(pos) !== SP) return failAt(part, `unexpected ${describeUnit(src.code(pos))}`, pos);
  cur.pos = pos + 1;
  return undefined;
}

function isPrintUsAscii(unit: number): boolean {
  return unit > 32 && unit < 127;
}

function digitsEnd(src: SyslogSource, start: number): number {
  let end = start;
  while (end < src.length && src.code(end) >= ZERO && src.code(end) <= ZERO + 9) end += 1;
  return end;
}

const DATE_TIME = 'dddd-dd-ddTdd:dd:dd';
const OFFSET = 'dd:dd';
const MAX_FRACTION_DIGITS = 6;

/** TIMESTAMP = FULL-DATE "T" FULL-TIME: upper-case T and Z, 1..6 fraction digits, offset required. */
function timestampNanos(text: string, start: number): Step<bigint> {
  const offset = timestampShape(text, start);
  if (!offset.ok) return offset;
  const two = (i: number): number => Number(text.slice(i, i + 2));
  const year = Number(text.slice(0, 4));
  const month = two(5);
  if (month < 1 || month > 12) return failAt('TIMESTAMP', `month ${text.slice(5, 7)} out of range`, start + 5);
  if (two(8) < 1 || two(8) > daysInMonth(year, month)) {
    return failAt('TIMESTAMP', `day ${text.slice(8, 10)} does not exist in ${text.slice(0, 7)}`, start + 8);
  }
  if (two(11) > 23) return failAt('TIMESTAMP', 'hour above 23', start + 11);
  if (two(14) > 59) return failAt('TIMESTAMP', 'minute above 59', start + 14);
  // TIME-SECOND is 00..59: RFC 5424 6.2.3 rules out the leap second 60.
  if (two(17) > 59) return failAt('TIMESTAMP', 'second above 59', start + 17);
  const o = offset.value;
  if (o !== undefined && two(o + 1) > 23) return failAt('TIMESTAMP', 'offset hour above 23', start + o + 1);
  if (o !== undefined && two(o + 4) > 59) return failAt('TIMESTAMP', 'offset minute above 59', start + o + 4);
  // nanosFromIso goes through Date.UTC, which reads years 0..99 as 1900..1999: refuse rather than misdate.
  if (year < 100) return failAt('TIMESTAMP', `year ${text.slice(0, 4)} before 0100 is not supported`, start);
  const nanos = nanosFromIso(text, MAX_FRACTION_DIGITS);
  if (nanos === undefined) return failAt('TIMESTAMP', 'instant outside 0001-01-01..9999-12-31 UTC', start);
  return { ok: true, value: nanos };
}

/** Checks the layout of a non-NIL TIMESTAMP; the value is the index of a numeric offset's sign. */
function timestampShape(text: string, start: number): Step<number | undefined> {
  const layout = matchLayout(text, 0, DATE_TIME, start);
  if (layout) return layout;
  let pos = DATE_TIME.length;
  if (text[pos] === '.') {
    const end = pos + 1 + (/^\d*/.exec(text.slice(pos + 1))?.[0].length ?? 0);
    if (end === pos + 1) return failAt('TIMESTAMP', 'expected a fraction digit', start + pos + 1);
    if (end - pos - 1 > MAX_FRACTION_DIGITS) {
      return failAt('TIMESTAMP', `more than ${MAX_FRACTION_DIGITS} fraction digits`, start + pos + 1);
    }
    pos = end;
  }
  let offset: number | undefined;
  if (text[pos] === '+' || text[pos] === '-') {
    const bad = matchLayout(text, pos + 1, OFFSET, start);
    if (bad) return bad;
    offset = pos;
    pos += 1 + OFFSET.length;
  } else if (text[pos] === 'Z') {
    pos += 1;
  } else {
    return failAt('TIMESTAMP', "expected 'Z' or a +hh:mm / -hh:mm offset", start + pos);
  }
  if (pos < text.length) return failAt('TIMESTAMP', `unexpected '${text[pos]}' after the offset`, start + pos);
  return { ok: true, value: offset };
}

/** Matches `layout` ('d' = any ASCII digit, other characters literal) at `from`. */
function matchLayout(text: string, from: number, layout: string, start: number): Failure | undefined {
  for (let i = 0; i < layout.length; i += 1) {
    const want = layout[i]!;
    const got = text[from + i];
    const good = want === 'd' ? got !== undefined && got >= '0' && got <= '9' : got === want;
    if (!good) return failAt('TIMESTAMP', `expected ${want === 'd' ? 'a digit' : `'${want}'`}`, start + from + i);
  }
  return undefined;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** MSG: after a UTF-8 BOM it must be valid UTF-8; otherwise any octets (MSG-ANY). */
function readMessage(
  input: string | Uint8Array,
  start: number,
): Step<{ readonly message: string; readonly bom: boolean }> {
  if (typeof input === 'string') {
    // A decoded string carries the BOM as U+FEFF; a lone surrogate is what invalid UTF-8 would have become.
    const bom = input.charCodeAt(start) === 0xfeff;
    const message = input.slice(bom ? start + 1 : start);
    const lone = bom ? loneSurrogateIndex(message) : -1;
    if (lone >= 0) return failAt('MSG', 'lone surrogate after the BOM', start + 1 + lone);
    return { ok: true, value: { message, bom } };
  }
  const bom = input[start] === 0xef && input[start + 1] === 0xbb && input[start + 2] === 0xbf;
  const body = input.subarray(bom ? start + 3 : start);
  const text = decodeUtf8(body);
  if (text !== undefined) return { ok: true, value: { message: text, bom } };
  if (bom) return failAt('MSG', 'text after the BOM is not valid UTF-8', start);
  // Without a BOM the charset is undeclared (MSG-ANY): UTF-8 when the bytes are valid UTF-8, else
  // Latin-1, which maps every byte to one character so nothing is replaced or lost.
  return { ok: true, value: { message: latin1(body), bom: false } };
}

function utf8Length(input: string | Uint8Array): number {
  if (typeof input !== 'string') return input.length;
  // Each UTF-16 unit takes at least one UTF-8 byte, so a long string is refused without measuring.
  return input.length > MAX_MESSAGE_BYTES ? input.length : Buffer.byteLength(input, 'utf8');
}
