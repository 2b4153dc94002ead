import { HUNT_LIMITS } from './ast.js';

/** A parse failure at an offset of the query text; caught by `parseHunt` and answered as a HuntSyntaxError. */
export class HuntParseFailure extends Error {
  constructor(
    readonly position: number,
    readonly expected: readonly string[],
    readonly reason: string,
  ) {
    super(`at ${position}: ${reason}`);
  }
}

/** The parser's position in the text and the bounds it has used. */
export interface Cursor {
  readonly text: string;
  pos: number;
  depth: number;
  terms: number;
}

/** Fails the parse at `position`. */
export function fail(position: number, expected: readonly string[], reason: string): never {
  throw new HuntParseFailure(position, expected, reason);
}

/** The whitespace of the grammar (other Unicode spaces are ordinary characters). */
export const isSpace = (ch: string | undefined): boolean => ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r';

/** Characters with a meaning outside quotes; a backslash makes them literal. */
export const SPECIAL = '\\():<>"*{}|';

/** Characters after which a keyword ends. */
const KEYWORD_END = '()"{}|';

/** Skips whitespace. */
export function skipSpace(c: Cursor): void {
  while (isSpace(c.text[c.pos])) c.pos++;
}

/** The keyword (`and`, `or`, `not`, any case) that starts at `pos` as a whole word, if any. */
export function keywordAt(text: string, pos: number): 'and' | 'or' | 'not' | undefined {
  for (const word of ['and', 'or', 'not'] as const) {
    if (text.slice(pos, pos + word.length).toLowerCase() !== word) continue;
    const after = text[pos + word.length];
    if (after === undefined || isSpace(after) || KEYWORD_END.includes(after)) return word;
  }
  return undefined;
}

/** Consumes `ch` or fails naming it. */
export function expectChar(c: Cursor, ch: string, what: string): void {
  skipSpace(c);
  if (c.text[c.pos] !== ch) fail(c.pos, [ch], `expected ${what}`);
  c.pos++;
}

/** Enters one level of nesting (a group, `not`, a nested query), failing past the bound. */
export function enter(c: Cursor, at: number): void {
  c.depth++;
  if (c.depth > HUNT_LIMITS.depth) fail(at, [], `nesting deeper than ${HUNT_LIMITS.depth} levels`);
}

/** Counts one term, failing past the bound. */
export function countTerm(c: Cursor, at: number): void {
  c.terms++;
  if (c.terms > HUNT_LIMITS.terms) fail(at, [], `more than ${HUNT_LIMITS.terms} terms`);
}

/**
 * Reads the backslash escape at `c.pos` (KQL: a special character, a space, `\t` `\r` `\n`, or a
 * keyword written literally as `\and` `\or` `\not`, which wins over `\n`) and returns its text.
 */
export function readEscape(c: Cursor): string {
  const at = c.pos;
  const rest = c.text.slice(at + 1, at + 4).toLowerCase();
  for (const word of ['and', 'not', 'or']) {
    if (!rest.startsWith(word)) continue;
    c.pos += 1 + word.length;
    return c.text.slice(at + 1, at + 1 + word.length);
  }
  const ch = c.text[at + 1];
  const control: Record<string, string> = { t: '\t', r: '\r', n: '\n' };
  if (ch !== undefined && (SPECIAL.includes(ch) || ch === ' ' || Object.hasOwn(control, ch))) {
    c.pos += 2;
    return control[ch] ?? ch;
  }
  return fail(at, ['escapable character'], `expected one of ${SPECIAL}, a space, t, r, n or a keyword after '\\'`);
}

/** Reads a quoted string at `c.pos` (`\"` and `\\` escape, `\t` `\r` `\n` are controls, other `\` is literal). */
export function readQuoted(c: Cursor): string {
  const start = c.pos;
  let out = '';
  c.pos++;
  for (;;) {
    const ch = c.text[c.pos];
    if (ch === undefined) return fail(start, ['"'], 'unterminated quoted string');
    if (ch === '"') break;
    const next = c.text[c.pos + 1];
    if (ch === '\\' && next !== undefined && '"\\trn'.includes(next)) {
      out += next === 't' ? '\t' : next === 'r' ? '\r' : next === 'n' ? '\n' : next;
      c.pos += 2;
    } else {
      out += ch;
      c.pos++;
    }
  }
  c.pos++;
  return out;
}
