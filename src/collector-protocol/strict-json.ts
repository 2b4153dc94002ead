import { MAX_JSON_DEPTH } from '../json/depth.js';

/**
 * Strict JSON for signed envelopes: valid UTF-8, RFC 8259 syntax (JSON.parse), no duplicate object
 * keys (compared after unescaping, so `"a"` and `"\u0061"` clash), bounded nesting.
 */

/** Why a text is not strict JSON. */
export type StrictJsonResult = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The index just past the closing quote of the string starting at `start` (text is known-valid JSON). */
function stringEnd(text: string, start: number): number {
  let q = text.indexOf('"', start + 1);
  for (;;) {
    // A quote ends the string unless an odd run of backslashes escapes it.
    let b = q - 1;
    while (text.charCodeAt(b) === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    q = text.indexOf('"', q + 1);
  }
}

/**
 * The first problem of known-valid JSON text: a duplicate key or excessive depth. A string is a
 * key when it follows `{` or `,` inside an object.
 */
function structureProblem(text: string): string | undefined {
  const frames: Array<Set<string> | null> = [];
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = frames[frames.length - 1];
      if (top && (last === 0x7b || last === 0x2c)) {
        const raw = text.slice(i + 1, end - 1);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
        if (top.has(key)) return `duplicate key ${JSON.stringify(key.slice(0, 64))}`;
        top.add(key);
      }
      last = QUOTE;
      i = end - 1;
    } else if (c === 0x7b || c === 0x5b) {
      frames.push(c === 0x7b ? new Set() : null);
      if (frames.length > MAX_JSON_DEPTH) return `nesting deeper than ${MAX_JSON_DEPTH}`;
      last = c;
    } else if (c === 0x7d || c === 0x5d) {
      frames.pop();
      last = c;
    } else if (c === 0x2c || c === 0x3a) last = c;
    else if (c > 0x20) last = c;
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
  const problem = structureProblem(text);
  return problem ? { ok: false, error: problem } : { ok: true, value };
}
