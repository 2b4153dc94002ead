/**
 * Sigma string patterns: `*` (any run), `?` (one character), `\` escapes, and the windash class,
 * matched in linear time. Log text is attacker-controlled, so patterns never become backtracking
 * regexes: a pattern is split at `*` into fixed-length segments found left to right.
 */

/** One element of a parsed pattern. */
export type PatternToken =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'one' }
  | { readonly kind: 'any' }
  | { readonly kind: 'dash' };

/** A compiled pattern: tests one string. */
export type StringTest = (s: string) => boolean;

const ANY: PatternToken = { kind: 'any' };
const ONE: PatternToken = { kind: 'one' };
const DASH: PatternToken = { kind: 'dash' };

/** The characters `windash` treats as interchangeable (spec v2.1: `-`, `/`, en dash, em dash, horizontal bar). */
export const DASH_CHARACTERS = '-/\u2013\u2014\u2015';

/**
 * Parses a Sigma value into tokens: `*` and `?` are wildcards, `\*`, `\?` and `\\` are the literal
 * characters, and a backslash before anything else stays a literal backslash (spec "Wildcards").
 */
export function parsePattern(value: string): PatternToken[] {
  const tokens: PatternToken[] = [];
  let text = '';
  const flush = (): void => {
    if (text !== '') tokens.push({ kind: 'text', text });
    text = '';
  };
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      const next = value[i + 1];
      if (next === '*' || next === '?' || next === '\\') {
        text += next;
        i++;
      } else {
        text += c;
      }
    } else if (c === '*' || c === '?') {
      flush();
      tokens.push(c === '*' ? ANY : ONE);
    } else {
      text += c;
    }
  }
  flush();
  return tokens;
}

/** Tokens for a value taken literally (base64-encoded values): no wildcards at all. */
export function literalPattern(value: string): PatternToken[] {
  return value === '' ? [] : [{ kind: 'text', text: value }];
}

/** Wraps a pattern for `contains` / `startswith` / `endswith` (the spec's "puts `*` around the value"). */
export function anchorPattern(
  tokens: PatternToken[],
  position: 'contains' | 'startswith' | 'endswith' | undefined,
): PatternToken[] {
  if (position === 'contains') return [ANY, ...tokens, ANY];
  if (position === 'startswith') return [...tokens, ANY];
  if (position === 'endswith') return [ANY, ...tokens];
  return tokens;
}

const WORD = /[A-Za-z0-9_]/;
const DASH_CLASS = '[\\-\\/\\u2013\\u2014\\u2015]';

/**
 * Applies `windash`: a dash-like character that starts a command-line flag (preceded by a non-word
 * character or the start, followed by a word character, as pySigma does) matches any of the five.
 */
export function windashPattern(tokens: PatternToken[]): PatternToken[] {
  const out: PatternToken[] = [];
  let prevIsWord = false;
  tokens.forEach((token, index) => {
    if (token.kind !== 'text') {
      out.push(token);
      prevIsWord = false;
      return;
    }
    const following = tokens[index + 1];
    let run = '';
    for (let i = 0; i < token.text.length; i++) {
      const c = token.text[i]!;
      const next =
        i + 1 < token.text.length ? token.text[i + 1] : following?.kind === 'text' ? following.text[0] : undefined;
      if (DASH_CHARACTERS.includes(c) && !prevIsWord && next !== undefined && WORD.test(next)) {
        if (run !== '') out.push({ kind: 'text', text: run });
        run = '';
        out.push(DASH);
      } else {
        run += c;
      }
      prevIsWord = WORD.test(c);
    }
    if (run !== '') out.push({ kind: 'text', text: run });
  });
  return out;
}

/** A fixed-length piece of a pattern between stars. */
interface Segment {
  readonly length: number;
  /** Whether the segment matches `s` at index `i`. */
  at(s: string, i: number): boolean;
  /** The first index at or after `from` where the segment matches, or -1. */
  find(s: string, from: number): number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

function regexSegment(tokens: PatternToken[], cased: boolean): Segment {
  let source = '';
  let length = 0;
  for (const token of tokens) {
    if (token.kind === 'text') {
      source += escapeRegExp(token.text);
      length += token.text.length;
    } else {
      // No `u` flag: every token matches exactly one UTF-16 unit, so segment lengths are fixed.
      source += token.kind === 'one' ? '[\\s\\S]' : DASH_CLASS;
      length += 1;
    }
  }
  const flags = cased ? '' : 'i';
  const sticky = new RegExp(source, `y${flags}`);
  const search = new RegExp(source, `g${flags}`);
  return {
    length,
    at(s, i) {
      sticky.lastIndex = i;
      return sticky.test(s);
    },
    find(s, from) {
      search.lastIndex = from;
      return search.test(s) ? search.lastIndex - length : -1;
    },
  };
}

/** Plain text is found with indexOf, on lower-cased input when the match is case-insensitive. */
function textSegment(text: string): Segment {
  return { length: text.length, at: (s, i) => s.startsWith(text, i), find: (s, from) => s.indexOf(text, from) };
}

/** Lower-cased texts by text: an event's fields are tested by many rules, each lower-cased once. */
const lowered = new Map<string, string>();
const LOWERED_KEPT = 256;

/** The lower-cased text, from a small cache (the same field values recur across the rules of one event). */
export function lowerOf(s: string): string {
  let lower = lowered.get(s);
  if (lower === undefined) {
    if (lowered.size >= LOWERED_KEPT) lowered.clear();
    lower = s.toLowerCase();
    lowered.set(s, lower);
  }
  return lower;
}

/** Splits tokens at `*` into segments, remembering whether the pattern is open at either end. */
function splitAtAny(tokens: PatternToken[]): { segments: PatternToken[][]; openStart: boolean; openEnd: boolean } {
  const segments: PatternToken[][] = [];
  let current: PatternToken[] = [];
  for (const token of tokens) {
    if (token.kind === 'any') {
      if (current.length > 0) segments.push(current);
      current = [];
    } else {
      current.push(token);
    }
  }
  if (current.length > 0) segments.push(current);
  return { segments, openStart: tokens[0]?.kind === 'any', openEnd: tokens[tokens.length - 1]?.kind === 'any' };
}

function globTest(segments: Segment[], openStart: boolean, openEnd: boolean): StringTest {
  const first = openStart ? undefined : segments[0];
  const last = openEnd ? undefined : segments[segments.length - 1];
  const middle = segments.slice(first ? 1 : 0, last ? segments.length - 1 : segments.length);
  return (s) => {
    let pos = 0;
    if (first) {
      if (!first.at(s, 0)) return false;
      pos = first.length;
    }
    for (const seg of middle) {
      const found = seg.find(s, pos);
      if (found < 0) return false;
      pos = found + seg.length;
    }
    if (!last) return true;
    const at = s.length - last.length;
    return at >= pos && last.at(s, at);
  };
}

/**
 * Compiles tokens into a whole-string test (case-insensitive unless `cased`). Segments between
 * stars are located leftmost-first, which is exact for `*` globs and linear in the input.
 */
export function compilePattern(tokens: PatternToken[], cased: boolean): StringTest {
  const parts = splitAtAny(tokens);
  if (!tokens.some((t) => t.kind === 'any')) {
    const only = parts.segments[0];
    if (only === undefined) return (s) => s.length === 0;
    const segment = regexSegment(only, cased);
    return (s) => s.length === segment.length && segment.at(s, 0);
  }
  const plain = parts.segments.every((seg) => seg.every((t) => t.kind === 'text'));
  if (!plain)
    return globTest(
      parts.segments.map((seg) => regexSegment(seg, cased)),
      parts.openStart,
      parts.openEnd,
    );
  const texts = parts.segments.map((seg) => seg.map((t) => (t.kind === 'text' ? t.text : '')).join(''));
  if (cased) return globTest(texts.map(textSegment), parts.openStart, parts.openEnd);
  const lowered = globTest(
    texts.map((t) => textSegment(t.toLowerCase())),
    parts.openStart,
    parts.openEnd,
  );
  return (s) => lowered(lowerOf(s));
}
