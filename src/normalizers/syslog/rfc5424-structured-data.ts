/**
 * RFC 5424 STRUCTURED-DATA (section 6.3): NILVALUE or SD-ELEMENTs written back to back, each
 * `[SD-ID *(SP PARAM-NAME="PARAM-VALUE")]`. Kept apart from the header parser because it is the
 * only part with nesting, escapes and UTF-8 text; it also holds the input model (string or bytes
 * read unit by unit) and the decoders both parsers share.
 */
import { Buffer } from 'node:buffer';

/** One SD-ELEMENT: its SD-ID and its parameters in the order sent, values unescaped. */
export interface SdElement {
  readonly id: string;
  readonly params: ReadonlyArray<readonly [name: string, value: string]>;
}

/**
 * The input as the parsers read it: one unit per position (a byte for byte input, a UTF-16 code
 * unit for string input), so columns in errors count the units of whatever the caller passed.
 */
export interface SyslogSource {
  readonly length: number;
  /** The unit at `index`; only called with `index < length`. */
  code(index: number): number;
  /** Text of a span already checked to be printable US-ASCII. */
  ascii(start: number, end: number): string;
  /** Text of a span that must be well-formed UTF-8 (bytes) or UTF-16 (string); undefined if not. */
  unicode(start: number, end: number): string | undefined;
}

/** A refusal naming the RFC 5424 part and the 1-based column where the input went wrong. */
export interface Failure {
  readonly ok: false;
  readonly error: string;
}

/** Builds a Failure from a 0-based index, so every error reads `PART: what at column N`. */
export function failAt(part: string, what: string, index: number): Failure {
  return { ok: false, error: `${part}: ${what} at column ${index + 1}` };
}

/** Names one input unit in an error: printable ASCII quoted, everything else as hex. */
export function describeUnit(unit: number): string {
  if (unit === SP) return 'SP';
  if (unit > 32 && unit < 127) return `'${String.fromCharCode(unit)}'`;
  return `0x${unit.toString(16).toUpperCase().padStart(2, '0')}`;
}

// With the u flag a well-formed pair is one astral code point, so only unpaired halves match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Strict UTF-8 decoding (overlong forms and surrogates refused, a BOM kept as U+FEFF); undefined if invalid. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/** ISO-8859-1 decoding: one character per byte, so no byte is lost or replaced. */
export function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
}

/** Index of the first unpaired UTF-16 surrogate in `text`, or -1 when it is well-formed. */
export function loneSurrogateIndex(text: string): number {
  return LONE_SURROGATE.exec(text)?.index ?? -1;
}

/** The SyslogSource over a string or bytes; undefined for anything else. */
export function syslogSource(input: unknown): SyslogSource | undefined {
  if (typeof input === 'string') {
    return {
      length: input.length,
      code: (i) => input.charCodeAt(i),
      ascii: (start, end) => input.slice(start, end),
      unicode: (start, end) => {
        const text = input.slice(start, end);
        return loneSurrogateIndex(text) < 0 ? text : undefined;
      },
    };
  }
  if (!(input instanceof Uint8Array)) return undefined;
  return {
    length: input.length,
    code: (i) => input[i]!,
    ascii: (start, end) => latin1(input.subarray(start, end)),
    unicode: (start, end) => decodeUtf8(input.subarray(start, end)),
  };
}

const SP = 0x20;
const DASH = 0x2d;
const QUOTE = 0x22;
const EQUALS = 0x3d;
const BACKSLASH = 0x5c;
const OPEN = 0x5b;
const CLOSE = 0x5d;
const MAX_SD_NAME = 32;
const PART = 'STRUCTURED-DATA';

type Parsed<T> = { readonly ok: true; readonly value: T; readonly end: number } | Failure;

/** Parses STRUCTURED-DATA starting at `start`; `end` is the index just past it. */
export function parseStructuredData(src: SyslogSource, start: number): Parsed<SdElement[]> {
  if (start >= src.length) return failAt(PART, 'missing', start);
  const first = src.code(start);
  if (first === DASH) return { ok: true, value: [], end: start + 1 };
  if (first !== OPEN) return failAt(PART, `expected '-' or '[' but found ${describeUnit(first)}`, start);
  const elements: SdElement[] = [];
  const seen = new Set<string>();
  let pos = start;
  while (pos < src.length && src.code(pos) === OPEN) {
    const element = parseElement(src, pos);
    if (!element.ok) return element;
    // RFC 5424 6.3.2: the same SD-ID MUST NOT exist more than once in a message.
    if (seen.has(element.value.id)) return failAt(PART, `duplicate SD-ID "${element.value.id}"`, pos + 1);
    seen.add(element.value.id);
    elements.push(element.value);
    pos = element.end;
  }
  return { ok: true, value: elements, end: pos };
}

function parseElement(src: SyslogSource, open: number): Parsed<SdElement> {
  const id = readName(src, open + 1, 'SD-ID', open);
  if (!id.ok) return id;
  const params: Array<readonly [string, string]> = [];
  let pos = id.end;
  for (;;) {
    if (pos >= src.length) return unterminated(open);
    const unit = src.code(pos);
    if (unit === CLOSE) return { ok: true, value: { id: id.value, params }, end: pos + 1 };
    if (unit !== SP) return failAt(PART, `expected SP or ']' but found ${describeUnit(unit)}`, pos);
    const param = parseParam(src, pos + 1, open);
    if (!param.ok) return param;
    params.push(param.value);
    pos = param.end;
  }
}

function parseParam(src: SyslogSource, start: number, open: number): Parsed<readonly [string, string]> {
  const name = readName(src, start, 'PARAM-NAME', open);
  if (!name.ok) return name;
  let pos = name.end;
  if (pos >= src.length) return unterminated(open);
  // The ABNF has no optional spaces: `name= "v"` and `name=v` are both malformed.
  if (src.code(pos) !== EQUALS)
    return failAt(PART, `expected '=' after PARAM-NAME but found ${describeUnit(src.code(pos))}`, pos);
  pos += 1;
  if (pos >= src.length) return unterminated(open);
  if (src.code(pos) !== QUOTE)
    return failAt(PART, `expected '"' to open PARAM-VALUE but found ${describeUnit(src.code(pos))}`, pos);
  const value = readValue(src, pos + 1, open);
  if (!value.ok) return value;
  return { ok: true, value: [name.value, value.value], end: value.end };
}

/** SD-NAME: 1..32 PRINTUSASCII except '=', SP, ']' and '"'. */
function readName(src: SyslogSource, start: number, what: string, open: number): Parsed<string> {
  let end = start;
  while (end < src.length && isNameUnit(src.code(end))) end += 1;
  if (end === start) {
    if (end >= src.length) return unterminated(open);
    return failAt(PART, `expected ${what} but found ${describeUnit(src.code(end))}`, end);
  }
  if (end - start > MAX_SD_NAME) return failAt(PART, `${what} longer than ${MAX_SD_NAME} characters`, start);
  return { ok: true, value: src.ascii(start, end), end };
}

function isNameUnit(unit: number): boolean {
  return unit > 32 && unit < 127 && unit !== EQUALS && unit !== CLOSE && unit !== QUOTE;
}

/** PARAM-VALUE after its opening quote; `end` is just past the closing quote. */
function readValue(src: SyslogSource, start: number, open: number): Parsed<string> {
  let pos = start;
  let escaped = false;
  for (;;) {
    if (pos >= src.length) return unterminated(open);
    const unit = src.code(pos);
    if (unit === QUOTE) break;
    if (unit === CLOSE) return failAt(PART, "unescaped ']' in PARAM-VALUE", pos);
    if (unit === BACKSLASH && pos + 1 < src.length && isEscapable(src.code(pos + 1))) {
      escaped = true;
      pos += 2;
    } else {
      // RFC 5424 6.3.3: a backslash before any other character is kept as a literal backslash.
      pos += 1;
    }
  }
  const raw = src.unicode(start, pos);
  if (raw === undefined) return failAt(PART, 'PARAM-VALUE is not valid UTF-8', start);
  return { ok: true, value: escaped ? raw.replace(ESCAPE, '$1') : raw, end: pos + 1 };
}

const ESCAPE = /\\(["\\\]])/g;

function isEscapable(unit: number): boolean {
  return unit === QUOTE || unit === BACKSLASH || unit === CLOSE;
}

function unterminated(open: number): Failure {
  return failAt(PART, 'unterminated SD-ELEMENT', open);
}
