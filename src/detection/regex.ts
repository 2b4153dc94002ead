import { setFlagsFromString } from 'node:v8';

/**
 * Sigma `re` values are written for Python's `re` / PCRE (pySigma's backends pass them through).
 * JavaScript's syntax differs in a few places; this translates them to an equivalent JavaScript
 * pattern and flags, or says why a construct cannot be expressed:
 *
 * | written | meaning | JavaScript |
 * |---|---|---|
 * | `(?i)`, `(?s)` at the start | flags for the whole pattern | the `i`, `s` flags |
 * | `(?m)` at the start | `^`/`$` at every `\n` | `(?<![^\n])`, `(?![^\n])` (JavaScript's `m` also breaks at `\r`, U+2028, U+2029) |
 * | `(?P<name>...)`, `(?P=name)` | named group, back-reference | `(?<name>...)`, `\k<name>` |
 * | `\A`, `\Z` | start, end of the text | `^`, `$` (with `(?m)`: `(?<![\s\S])`, `(?![\s\S])`) |
 * | `$` | end, or before a final newline | `\n?$` where nothing follows it, else `(?=\n?(?![\s\S]))` (without `m`) |
 * | `.` | any character but `\n` | `[^\n]` (JavaScript's `.` also excludes `\r`, U+2028, U+2029) |
 * | `(?#...)` | comment | removed |
 *
 * Refused: inline flags anywhere but the start (`a(?i)b`), scoped flags (`(?i:...)`), `(?x)`,
 * atomic groups `(?>...)`, possessive quantifiers (`a++`), conditionals `(?(1)...)` and `\G`.
 */

/**
 * Rule patterns come from whoever may import or preview a rule (a viewer previews), and V8's
 * backtracking engine can take exponential time on them (`^([a-z:]*)*[A-Z]$` against a 30-character
 * value: 90 s, all of it blocking the process). With this flag V8 reruns a match that backtracks
 * past its limit on its linear-time engine, which covers every pattern without lookarounds or
 * back-references; the translation below therefore emits none of its own outside (?m).
 */
setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');

/** A translated pattern, or the reason it cannot be expressed in JavaScript. */
export type RegexTranslation = { readonly ok: true; readonly source: string; readonly flags: string } | { readonly ok: false; readonly error: string };

const LEADING_FLAGS = /^\(\?([a-zA-Z]+)\)/;

function refuse(error: string): RegexTranslation {
  return { ok: false, error };
}

/** Translates a Python/PCRE pattern with the `re` sub-modifier flags (`i`, `m`, `s`) to JavaScript. */
export function translateRegex(pattern: string, modifierFlags = ''): RegexTranslation {
  let flags = modifierFlags;
  let rest = pattern;
  for (let m = LEADING_FLAGS.exec(rest); m; m = LEADING_FLAGS.exec(rest)) {
    for (const f of m[1]!) {
      if (f === 'i' || f === 'm' || f === 's') { if (!flags.includes(f)) flags += f; } else if (f === 'u' || f === 'a' || f === 'L') {
        // Unicode/ASCII/locale matching: JavaScript without `u` matches code units, as ASCII-only text does.
      } else return refuse(`inline flag '${f}' has no JavaScript equivalent`);
    }
    rest = rest.slice(m[0].length);
  }
  const body = translateBody(rest, flags.includes('m'), flags.includes('s'));
  if (typeof body !== 'string') return body;
  // Line anchors are translated explicitly (JavaScript's `m` also breaks lines at `\r`, U+2028, U+2029).
  flags = flags.replace('m', '');
  try {
    new RegExp(body, flags);
  } catch (error) {
    return refuse((error as Error).message);
  }
  return { ok: true, source: body, flags };
}

function translateBody(src: string, multiline: boolean, dotAll: boolean): string | RegexTranslation {
  let out = '';
  let inClass = false;
  let depth = 0;
  for (let i = 0; i < src.length; i++) {
    const c = src[i]!;
    if (c === '\\') {
      const next = src[i + 1];
      if (next === undefined) return refuse('the pattern ends with a lone backslash');
      i++;
      // Outside (?m) the pattern has no JavaScript `m` flag, so `^` and `$` are the text's ends.
      if (!inClass && next === 'A') out += multiline ? '(?<![\\s\\S])' : '^';
      else if (!inClass && (next === 'Z' || next === 'z')) out += multiline ? '(?![\\s\\S])' : '$';
      else if (next === 'G') return refuse(`'\\G' has no JavaScript equivalent`);
      else out += c + next;
      continue;
    }
    if (inClass) {
      if (c === ']' && !out.endsWith('[') && !out.endsWith('[^')) inClass = false;
      out += c;
      continue;
    }
    if (c === '[') { inClass = true; out += c; continue; }
    if (c === '.' && !dotAll) { out += '[^\\n]'; continue; }
    if (c === '$') {
      // Where nothing of the pattern follows (its end, or the end of a top-level alternative),
      // consuming the final newline is the same as looking ahead at it, for a test, and keeps the
      // pattern free of lookarounds, which V8's linear engine lacks (see the flag above).
      const last = depth === 0 && (i === src.length - 1 || src[i + 1] === '|');
      out += multiline ? '(?![^\\n])' : last ? '\\n?$' : '(?=\\n?(?![\\s\\S]))';
      continue;
    }
    if (c === '^' && multiline) { out += '(?<![^\\n])'; continue; }
    if ((c === '+' || c === '*' || c === '?' || c === '}') && src[i + 1] === '+') return refuse(`possessive quantifier '${c}+' has no JavaScript equivalent`);
    if (c === '(' && src[i + 1] === '?') {
      const group = translateGroupStart(src, i);
      if (typeof group !== 'string' && 'ok' in group) return group;
      if (typeof group === 'string') { depth++; out += group; continue; }
      if (group.text === '(?<') depth++;
      out += group.text;
      i = group.end - 1;
      continue;
    }
    if (c === '(') depth++;
    else if (c === ')') depth--;
    out += c;
  }
  return out;
}

/** `(?...` constructs: the replacement and where the construct ends, `(` when JavaScript reads it as written, or a refusal. */
function translateGroupStart(src: string, i: number): string | RegexTranslation | { text: string; end: number } {
  const head = src.slice(i, i + 4);
  if (head.startsWith('(?P<')) return { text: '(?<', end: i + 4 };
  if (head.startsWith('(?P=')) {
    const close = src.indexOf(')', i);
    if (close < 0) return refuse('unterminated (?P=name)');
    return { text: `\\k<${src.slice(i + 4, close)}>`, end: close + 1 };
  }
  if (head.startsWith('(?#')) {
    const close = src.indexOf(')', i);
    if (close < 0) return refuse('unterminated comment (?#...)');
    return { text: '', end: close + 1 };
  }
  if (head.startsWith('(?>')) return refuse(`atomic group '(?>' has no JavaScript equivalent`);
  if (head.startsWith('(?(')) return refuse(`conditional group '(?(' has no JavaScript equivalent`);
  const flags = /^\(\?[a-zA-Z-]+[:)]/.exec(src.slice(i));
  if (flags) return refuse(`inline flags '${flags[0]}' are supported only at the start of the pattern`);
  return '(';
}
