import { MAX_JSON_DEPTH } from '../json/depth.js';

/**
 * Strict JSON for signed envelopes: valid UTF-8, RFC 8259 syntax (JSON.parse), no duplicate object
 * keys (compared after unescaping, so `"a"` and `"\u0061"` clash), bounded nesting.
 */

/**
 * Strict JSON, parsed. `keysInOrder`: every object's member names are in strictly ascending
 * UTF-16 code-unit order (RFC 8785's order), unescaped, none an array index, so that
 * `JSON.stringify(value)` writes the members in canonical order (jcs.ts uses this). `canonical`:
 * the text itself is the RFC 8785 form of the value (keys in order, no whitespace, no escape,
 * every number as ECMAScript writes it), so any value's span of `text` is its canonical form.
 */
export type StrictJsonResult =
  | { readonly ok: true; readonly value: unknown; readonly text: string; readonly keysInOrder: boolean; readonly canonical: boolean }
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

/**
 * The index just past the closing quote of the string starting at `start` (text is known-valid
 * JSON; `escapes`: the text has a backslash somewhere, else the next quote ends the string).
 */
function stringEnd(text: string, start: number, escapes: boolean): number {
  let q = text.indexOf('"', start + 1);
  if (!escapes) return q + 1;
  for (;;) {
    // A quote ends the string unless an odd run of backslashes escapes it.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    q = text.indexOf('"', q + 1);
  }
}

/**
 * Whether the name text[from, to) follows text[prevFrom, prevTo) in strictly ascending code-unit
 * order, unescaped and not an array index; false when it cannot tell without unescaping (only a
 * text with `escapes` can have an escaped name).
 */
function follows(text: string, prevFrom: number, prevTo: number, from: number, to: number, escapes: boolean): boolean {
  if (escapes) for (let i = from; i < to; i++) if (text.charCodeAt(i) === BACKSLASH) return false;
  const first = text.charCodeAt(from);
  if (first >= ZERO && first <= NINE && INDEX_KEY.test(text.slice(from, to))) return false;
  if (prevFrom < 0) return true;
  const n = Math.min(prevTo - prevFrom, to - from);
  for (let k = 0; k < n; k++) {
    const a = text.charCodeAt(prevFrom + k);
    const b = text.charCodeAt(from + k);
    if (a !== b) return a < b;
  }
  return prevTo - prevFrom < to - from;
}

/** The index just past the number starting at `start` (text is known-valid JSON). */
function numberEnd(text: string, start: number): number {
  let i = start + 1;
  for (;;) {
    const c = text.charCodeAt(i);
    // Digits, '.', 'e', 'E', '+', '-': nothing else can continue a valid number.
    if ((c >= ZERO && c <= NINE) || c === 0x2e || c === 0x65 || c === 0x45 || c === 0x2b || c === MINUS) i++;
    else return i;
  }
}

/** Whether the number text[from, to) is written as ECMAScript writes its value (RFC 8785, 3.2.2.3). */
function canonicalNumber(text: string, from: number, to: number): boolean {
  const negative = text.charCodeAt(from) === MINUS ? 1 : 0;
  let integer = true;
  for (let i = from + negative; i < to && integer; i++) {
    const c = text.charCodeAt(i);
    integer = c >= ZERO && c <= NINE;
  }
  // A plain integer of up to 15 digits is exact and written as is, except -0 (written 0).
  if (integer && to - from - negative <= 15) return text.charCodeAt(from + negative) !== ZERO || (to - from === 1);
  const n = text.slice(from, to);
  return String(Number(n)) === n;
}

/** What the ordered scan found: a problem, or none and whether the text is canonical. */
type OrderedScan = { readonly problem: string } | { readonly problem?: undefined; readonly canonical: boolean };

/**
 * Scans known-valid JSON text for keys in canonical order (which also rules out duplicates), the
 * nesting bound, and whether the text is canonical as a whole. `undefined`: some object's keys are
 * not in order (or are escaped), and the general scan must decide. No allocation per key: each
 * object's previous key is kept as a range of the text.
 */
function orderedScan(text: string): OrderedScan | undefined {
  const prevFrom: number[] = [];
  const prevTo: number[] = [];
  // An escape anywhere may not be the canonical one (`\u0061` for `a`): such text is not canonical.
  const escapes = text.indexOf('\\') !== -1;
  let canonical = !escapes;
  let depth = 0;
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i, escapes);
      // Most strings are values (after `:`): the cheapest test first rules them out.
      if ((last === OPEN_OBJECT || last === COMMA) && depth > 0 && prevFrom[depth - 1]! !== -2) {
        const from = last === OPEN_OBJECT ? -1 : prevFrom[depth - 1]!;
        if (!follows(text, from, prevTo[depth - 1]!, i + 1, end - 1, escapes)) return undefined;
        prevFrom[depth - 1] = i + 1;
        prevTo[depth - 1] = end - 1;
      }
      last = QUOTE;
      i = end - 1;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      // -2 marks an array frame: its strings are values, never keys.
      prevFrom[depth] = c === OPEN_OBJECT ? -1 : -2;
      prevTo[depth] = -1;
      if (++depth > MAX_JSON_DEPTH) return { problem: `nesting deeper than ${MAX_JSON_DEPTH}` };
      last = c;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      last = c;
    } else if (c === MINUS || (c >= ZERO && c <= NINE)) {
      const end = numberEnd(text, i);
      if (canonical) canonical = canonicalNumber(text, i, end);
      last = c;
      i = end - 1;
    } else if (c > 0x20) last = c;
    else canonical = false;
  }
  return { canonical };
}

/**
 * The first problem of known-valid JSON text: a duplicate key or excessive depth. A string is a
 * key when it follows `{` or `,` inside an object. Keys are compared after unescaping.
 */
function structureProblem(text: string): string | undefined {
  const frames: Array<Set<string> | null> = [];
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i, true);
      const top = frames[frames.length - 1];
      if (top && (last === OPEN_OBJECT || last === COMMA)) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
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

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Parses UTF-8 bytes as strict JSON; never throws. */
export function parseStrictJson(bytes: Uint8Array): StrictJsonResult {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, error: 'body is not valid UTF-8' };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    return { ok: false, error: `malformed JSON${at ? ` at position ${at}` : ''}` };
  }
  // Collectors send payloads in canonical order (docs/collector-protocol.md): one cheap scan then.
  const ordered = orderedScan(text);
  if (ordered !== undefined) return ordered.problem !== undefined ? { ok: false, error: ordered.problem } : { ok: true, value, text, keysInOrder: true, canonical: ordered.canonical };
  const problem = structureProblem(text);
  return problem ? { ok: false, error: problem } : { ok: true, value, text, keysInOrder: false, canonical: false };
}
