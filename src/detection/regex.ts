import { setFlagsFromString } from 'node:v8';

/**
 * Sigma `re` values are written for Python's `re` / PCRE (pySigma's backends pass them through).
 * JavaScript's syntax differs in a few places; this translates them to an equivalent JavaScript
 * pattern and flags, or says why a construct cannot be expressed:
 *
 * | written | meaning | JavaScript |
 * |---|---|---|
 * | `(?i)`, `(?s)` at the start | flags for the whole pattern | the `i`, `s` flags |
 * | `(?m)` at the start | `^`/`$` at every `\n` | `(?<![^\n])`, `(?![^\n])` (JavaScript's `m` also breaks at `\r`,
 * U+2028, U+2029) |
 * | `(?P<name>...)`, `(?P=name)` | named group, back-reference | `(?<name>...)`, `\k<name>` |
 * | `\A`, `\Z` | start, end of the text | `^`, `$` (with `(?m)`: `(?<![\s\S])`, `(?![\s\S])`) |
 * | `$` | end, or before a final newline | `\n?$` where nothing of the pattern can follow it, else `(?=\n?(?![\s\S]))`
 * (without `m`) |
 * | `[]a]`, `[^]a]` | a `]` first in a class is literal | `[\]a]`, `[^\]a]` |
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
/** Lets `linearTime` ask V8 whether its linear-time engine can run a pattern (the `l` flag); nothing else uses it. */
setFlagsFromString('--enable-experimental-regexp-engine');

/**
 * Whether V8's linear-time engine can run a pattern, so that the flag above bounds its cost on any
 * text. Lookarounds and back-references it cannot run: a rule with such a pattern is evaluated off
 * the request thread under a deadline (src/commands/alerting/isolated-rules.ts).
 */
export function linearTime(source: string, flags: string): boolean {
  try {
    new RegExp(source, `${flags}l`);
    return true;
  } catch {
    return false;
  }
}

/** A translated pattern, or the reason it cannot be expressed in JavaScript. */
export type RegexTranslation =
  | { readonly ok: true; readonly source: string; readonly flags: string }
  | { readonly ok: false; readonly error: string };

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
      if (f === 'i' || f === 'm' || f === 's') {
        if (!flags.includes(f)) flags += f;
      } else if (f === 'u' || f === 'a' || f === 'L') {
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

/** What a group is, for whether a `$` inside it ends the match: a lookaround's `$` is not the match's end. */
type GroupKind = 'group' | 'lookaround';

const LOOKAROUND = /^\(\?(?:=|!|<=|<!)/;

function translateBody(src: string, multiline: boolean, dotAll: boolean): string | RegexTranslation {
  let out = '';
  let inClass = false;
  let classFirst = -1;
  const open: GroupKind[] = [];
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
      // Python reads a `]` first in a class as a literal; JavaScript would read `[]` as an empty class.
      if (c === ']' && i === classFirst) out += '\\]';
      else {
        if (c === ']') inClass = false;
        out += c;
      }
      continue;
    }
    if (c === '[') {
      inClass = true;
      classFirst = src[i + 1] === '^' ? i + 2 : i + 1;
      out += c;
      continue;
    }
    if (c === '.' && !dotAll) {
      out += '[^\\n]';
      continue;
    }
    if (c === '$') {
      // Where nothing of the pattern can follow, consuming the final newline is the same as looking
      // ahead at it, for a test, and keeps the pattern free of lookarounds, which V8's linear engine
      // lacks (see the flag above).
      out += multiline ? '(?![^\\n])' : endsMatch(src, i + 1, open) ? '\\n?$' : '(?=\\n?(?![\\s\\S]))';
      continue;
    }
    if (c === '^' && multiline) {
      out += '(?<![^\\n])';
      continue;
    }
    if ((c === '+' || c === '*' || c === '?' || c === '}') && src[i + 1] === '+')
      return refuse(`possessive quantifier '${c}+' has no JavaScript equivalent`);
    if (c === '(' && src[i + 1] === '?') {
      const group = translateGroupStart(src, i);
      if (typeof group !== 'string' && 'ok' in group) return group;
      if (typeof group === 'string') {
        open.push(LOOKAROUND.test(src.slice(i, i + 4)) ? 'lookaround' : 'group');
        out += group;
        continue;
      }
      if (group.text === '(?<') open.push('group');
      out += group.text;
      i = group.end - 1;
      continue;
    }
    if (c === '(') open.push('group');
    else if (c === ')') open.pop();
    out += c;
  }
  return out;
}

/**
 * Whether nothing of the pattern can match after `src[from]`, inside the groups `open`: only
 * closings of groups follow (none quantified, none a lookaround) up to the pattern's end or to a
 * `|`, after which the rest of that alternation is skipped and the same holds.
 */
function endsMatch(src: string, from: number, open: readonly GroupKind[]): boolean {
  let depth = open.length;
  for (let j = from; j < src.length;) {
    if (src[j] === '|') {
      if (depth === 0) return true;
      j = closingOf(src, j);
      if (j < 0) return false;
    } else if (src[j] === ')' && depth > 0 && open[depth - 1] === 'group' && !/[*+?{]/.test(src[j + 1] ?? '')) {
      depth--;
      j++;
    } else return false;
  }
  return depth === 0;
}

/** The index of the `)` closing the group that `src[from]` is in, or -1. */
function closingOf(src: string, from: number): number {
  let nested = 0;
  for (let k = from; k < src.length; k++) {
    const c = src[k];
    if (c === '\\') k++;
    else if (c === '[') {
      // The class ends at the first `]` that is not its first character.
      k += src[k + 1] === '^' ? 2 : 1;
      if (src[k] === ']') k++;
      while (k < src.length && src[k] !== ']') k += src[k] === '\\' ? 2 : 1;
    } else if (c === '(') nested++;
    else if (c === ')' && nested-- === 0) return k;
  }
  return -1;
}

/**
 * `(?...` constructs: the replacement and where the construct ends, `(` when JavaScript reads it as written, or a
 * refusal.
 */
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
