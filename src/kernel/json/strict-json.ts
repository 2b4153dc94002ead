import { isUtf8 } from 'node:buffer';
import { MAX_JSON_DEPTH } from './depth.js';
import { PIECES_PAST_BYTES, parseArrayInPieces } from './array-pieces.js';
import { asBuffer, latin1Text, utf8Text } from './buffer-text.js';

/**
 * Strict JSON for signed envelopes: valid UTF-8, RFC 8259 syntax (JSON.parse), no duplicate object
 * keys (compared after unescaping, so `"a"` and `"\u0061"` clash), bounded nesting.
 *
 * A collector's envelope is one large array (its events) inside a few small objects. Decoded
 * whole, its text is a string larger than V8's regular heap pages, which gets pages of its own,
 * freshly mapped each time: on the VMs we measure on, that costs as much as parsing it
 * (src/kernel/json/array-pieces.ts, docs/benchmarks.md). So the checks run over the bytes, and the
 * largest array is parsed in pieces while the rest, with that array left out, is parsed as a
 * small text of its own.
 */

/**
 * Strict JSON, parsed. `keysInOrder`: every object's member names are in strictly ascending
 * UTF-16 code-unit order (RFC 8785's order), unescaped, none an array index, so that
 * `JSON.stringify(value)` writes the members in canonical order (jcs.ts uses this). `canonical`:
 * the bytes themselves are the RFC 8785 form of the value (keys in order, no whitespace, no
 * escape, every number as ECMAScript writes it), so any value's span of them is its canonical form.
 */
export type StrictJsonResult =
  | { readonly ok: true; readonly value: unknown; readonly keysInOrder: boolean; readonly canonical: boolean }
  | { readonly ok: false; readonly error: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** A name engines enumerate before all others, in numeric order (ECMAScript array index). */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;
/** An object frame before its first key; an array frame (its strings are values, never keys). */
const NO_KEY = -1;
const ARRAY_FRAME = -2;

/**
 * The index just past the closing quote of the string starting at `start`, or the end of the
 * bytes when none closes it (`escapes`: a backslash is somewhere, else the next quote ends it).
 */
function stringEnd(b: Buffer, start: number, escapes: boolean): number {
  let q = b.indexOf(QUOTE, start + 1);
  for (;;) {
    if (q === -1) return b.length;
    if (!escapes) return q + 1;
    // A quote ends the string unless an odd run of backslashes escapes it.
    let k = q - 1;
    while (b[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q + 1;
    q = b.indexOf(QUOTE, q + 1);
  }
}

/** Whether the bytes [from, to) are ASCII. */
function asciiSpan(b: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (b[i]! >= 0x80) return false;
  return true;
}

/**
 * Whether the name b[from, to) follows b[prevFrom, prevTo) in strictly ascending UTF-16 code-unit
 * order, unescaped and not an array index; false when it cannot tell without unescaping (only
 * bytes with `escapes` can hold an escaped name). UTF-8's byte order is the code points' order,
 * which is UTF-16's only while both names are ASCII: other names are compared as strings.
 */
function follows(b: Buffer, prevFrom: number, prevTo: number, from: number, to: number, escapes: boolean): boolean {
  if (escapes) for (let i = from; i < to; i++) if (b[i] === BACKSLASH) return false;
  const first = b[from]!;
  if (first >= ZERO && first <= NINE && INDEX_KEY.test(latin1Text(b, from, to))) return false;
  if (prevFrom < 0) return true;
  if (!asciiSpan(b, prevFrom, prevTo) || !asciiSpan(b, from, to))
    return utf8Text(b, prevFrom, prevTo) < utf8Text(b, from, to);
  const n = Math.min(prevTo - prevFrom, to - from);
  for (let k = 0; k < n; k++) {
    const x = b[prevFrom + k]!;
    const y = b[from + k]!;
    if (x !== y) return x < y;
  }
  return prevTo - prevFrom < to - from;
}

/** The index just past the number starting at `start`. */
function numberEnd(b: Buffer, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = b[i];
    // Digits, '.', 'e', 'E', '+', '-': nothing else can continue a valid number.
    if (
      c !== undefined &&
      ((c >= ZERO && c <= NINE) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS)
    )
      i++;
    else return i;
  }
}

/** Whether the number b[from, to) is written as ECMAScript writes its value (RFC 8785, 3.2.2.3). */
function canonicalNumber(b: Buffer, from: number, to: number): boolean {
  const negative = b[from] === MINUS ? 1 : 0;
  let integer = true;
  for (let i = from + negative; i < to && integer; i++) {
    const c = b[i]!;
    integer = c >= ZERO && c <= NINE;
  }
  // A plain integer of up to 15 digits is exact and written as is, except -0 (written 0).
  if (integer && to - from - negative <= 15) return b[from + negative] !== ZERO || to - from === 1;
  const n = latin1Text(b, from, to);
  return String(Number(n)) === n;
}

/** The largest array met whose every enclosing value is an object: its span and its members' names from the top. */
interface LargestArray {
  readonly open: number;
  readonly end: number;
  readonly path: readonly string[];
}

/**
 * What the ordered scan found: a problem, or none, whether the bytes are canonical, and the largest array worth
 * cutting.
 */
type OrderedScan =
  | { readonly problem: string }
  | { readonly problem?: undefined; readonly canonical: boolean; readonly largest?: LargestArray };

/**
 * Scans the bytes for keys in canonical order (which also rules out duplicates), the nesting
 * bound, whether they are canonical as a whole, and the largest array past the piece size whose
 * enclosing values are all objects. `undefined`: some object's keys are not in order (or are
 * escaped), or the brackets do not balance, and the general scan must decide. No allocation per
 * key: each object's previous key is kept as a range of the bytes.
 *
 * Its answer is only the text's when the text is JSON, which the caller establishes; on other
 * bytes it still ends, without throwing, whatever it answers.
 */
function orderedScan(b: Buffer): OrderedScan | undefined {
  const prevFrom: number[] = [];
  const prevTo: number[] = [];
  const opened: number[] = [];
  // An escape anywhere may not be the canonical one (`\u0061` for `a`): such text is not canonical.
  const escapes = b.indexOf(BACKSLASH) !== -1;
  let canonical = !escapes;
  let largest: LargestArray | undefined;
  let depth = 0;
  let last = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i, escapes);
      // Most strings are values (after `:`): the cheapest test first rules them out.
      if ((last === OPEN_OBJECT || last === COMMA) && depth > 0 && prevFrom[depth - 1]! !== ARRAY_FRAME) {
        const from = last === OPEN_OBJECT ? NO_KEY : prevFrom[depth - 1]!;
        if (!follows(b, from, prevTo[depth - 1]!, i + 1, end - 1, escapes)) return undefined;
        prevFrom[depth - 1] = i + 1;
        prevTo[depth - 1] = end - 1;
      }
      last = QUOTE;
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      prevFrom[depth] = c === OPEN_OBJECT ? NO_KEY : ARRAY_FRAME;
      prevTo[depth] = -1;
      opened[depth] = i;
      if (++depth > MAX_JSON_DEPTH) return { problem: `nesting deeper than ${MAX_JSON_DEPTH}` };
      last = c;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      if (depth === 0) return undefined;
      depth--;
      if (
        c === CLOSE_ARRAY &&
        i + 1 - opened[depth]! > Math.max(PIECES_PAST_BYTES, largest ? largest.end - largest.open : 0)
      ) {
        largest = largestAt(b, prevFrom, prevTo, opened[depth]!, i + 1, depth) ?? largest;
      }
      last = c;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const end = numberEnd(b, i);
      if (canonical) canonical = canonicalNumber(b, i, end);
      last = c;
      i = end - 1;
    } else if (c > 0x20) last = c;
    else canonical = false;
  }
  if (depth !== 0) return undefined;
  return largest ? { canonical, largest } : { canonical };
}

/**
 * The array b[open, end) at `depth`, named by its enclosing objects' current keys; undefined when an array encloses it.
 */
function largestAt(
  b: Buffer,
  prevFrom: readonly number[],
  prevTo: readonly number[],
  open: number,
  end: number,
  depth: number,
): LargestArray | undefined {
  const path: string[] = [];
  for (let d = 0; d < depth; d++) {
    if (prevFrom[d]! < 0) return undefined;
    path.push(utf8Text(b, prevFrom[d]!, prevTo[d]!));
  }
  return { open, end, path };
}

/**
 * The value of the bytes with their largest array parsed in pieces, or undefined when that does
 * not work out (the caller then parses them whole). The rest is parsed with `[` LF `]` where the
 * array stood: a raw line feed cannot be inside a JSON string, so where the rest parses the
 * stand-in is a value of its own, and the array, parsing too, is one in its place: the bytes are
 * then JSON, and the scan's answer (its path to the array included) is theirs.
 */
function parseAroundLargest(b: Buffer, largest: LargestArray): unknown {
  const elements = parseArrayInPieces(b, largest.open, largest.end);
  if (elements === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(`${utf8Text(b, 0, largest.open)}[\n]${utf8Text(b, largest.end, b.length)}`);
  } catch {
    return undefined;
  }
  if (largest.path.length === 0) return Array.isArray(value) && value.length === 0 ? elements : undefined;
  let holder = value as Record<string, unknown>;
  for (const name of largest.path.slice(0, -1)) {
    holder = holder[name] as Record<string, unknown>;
    if (typeof holder !== 'object' || holder === null) return undefined;
  }
  const name = largest.path[largest.path.length - 1]!;
  const standIn = holder[name];
  if (!Array.isArray(standIn) || standIn.length !== 0) return undefined;
  holder[name] = elements;
  return value;
}

/**
 * The first problem of JSON bytes: a duplicate key or excessive depth. A string is a key when it
 * follows `{` or `,` inside an object. Keys are compared after unescaping.
 */
function structureProblem(b: Buffer): string | undefined {
  const frames: Array<Set<string> | null> = [];
  let last = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i]!;
    if (c === QUOTE) {
      const end = stringEnd(b, i, true);
      const top = frames[frames.length - 1];
      if (top && (last === OPEN_OBJECT || last === COMMA)) {
        const raw = utf8Text(b, i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(utf8Text(b, i, end)) as string) : raw;
        if (top.has(key)) return `duplicate key ${JSON.stringify(key.slice(0, 64))}`;
        top.add(key);
      }
      last = QUOTE;
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      frames.push(c === OPEN_OBJECT ? new Set() : null);
      if (frames.length > MAX_JSON_DEPTH) return `nesting deeper than ${MAX_JSON_DEPTH}`;
      last = c;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      frames.pop();
      last = c;
    } else if (c > 0x20) last = c;
  }
  return undefined;
}

/** Parses UTF-8 bytes as strict JSON; never throws. */
export function parseStrictJson(bytes: Uint8Array): StrictJsonResult {
  const b = asBuffer(bytes);
  if (!isUtf8(b)) return { ok: false, error: 'body is not valid UTF-8' };
  // Collectors send payloads in canonical order (docs/collector-protocol.md): one cheap scan then.
  const scan = orderedScan(b);
  return inPieces(b, scan) ?? wholeStrictJson(b, scan);
}

/**
 * `parseStrictJson`'s answer when it parses the bytes' largest array in pieces; undefined when it
 * leaves them to the whole parse (small, not valid, keys out of order, no array to cut).
 */
export function parseStrictJsonInPieces(bytes: Uint8Array): StrictJsonResult | undefined {
  const b = asBuffer(bytes);
  return isUtf8(b) ? inPieces(b, orderedScan(b)) : undefined;
}

/** The same judgement as `parseStrictJson`, the text decoded and parsed whole. */
export function parseStrictJsonWhole(bytes: Uint8Array): StrictJsonResult {
  const b = asBuffer(bytes);
  if (!isUtf8(b)) return { ok: false, error: 'body is not valid UTF-8' };
  return wholeStrictJson(b, orderedScan(b));
}

function inPieces(b: Buffer, scan: OrderedScan | undefined): StrictJsonResult | undefined {
  if (scan?.problem !== undefined || scan?.largest === undefined) return undefined;
  const value = parseAroundLargest(b, scan.largest);
  return value === undefined ? undefined : { ok: true, value, keysInOrder: true, canonical: scan.canonical };
}

/**
 * The text parsed whole, then judged by the ordered scan (whose answer the parse makes the text's) or the general one.
 */
function wholeStrictJson(b: Buffer, scan: OrderedScan | undefined): StrictJsonResult {
  const text = utf8Text(b, 0, b.length);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    return { ok: false, error: `malformed JSON${at ? ` at position ${at}` : ''}` };
  }
  if (scan !== undefined)
    return scan.problem !== undefined
      ? { ok: false, error: scan.problem }
      : { ok: true, value, keysInOrder: true, canonical: scan.canonical };
  const problem = structureProblem(b);
  return problem ? { ok: false, error: problem } : { ok: true, value, keysInOrder: false, canonical: false };
}
