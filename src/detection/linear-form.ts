/**
 * Sigma `re` patterns rewritten, where that can be done exactly, into a form V8's linear-time
 * engine takes. Vigil lets V8 rerun a match that backtracks too much on that engine
 * (src/detection/regex.ts), but the engine (V8 11, Node 20) refuses two things common in SigmaHQ:
 * the `i` flag, and a counted repetition of more than 16 copies (`{0,20}`, `{36}`, `{1,256}`,
 * `(?:\d{1,11}\.){3}`). A pattern it refuses backtracks without bound on log text an attacker
 * writes: SigmaHQ's Invoke-Obfuscation pattern `(?i)(set).*&&\s?set.*(environment|invoke|\$?\{?input).*&&.*"`
 * is cubic, a 5,600-character command line took 0.46 s, one of 28,000 would take about a minute
 * (in the form below: 36 and 60 ms).
 *
 * - Without the `u` flag, `i` makes an ASCII letter match only itself in either case (a non-ASCII
 *   character never folds to an ASCII one), so an ASCII pattern is the same pattern without `i` when
 *   each letter becomes both of its cases: `a` → `[aA]`, `[a-f]` → `[a-fA-F]`, `[^x]` → `[^xX]`.
 * - A counted repetition is the same as its copies: `x{2,4}` → `xx(?:x(?:x)?)?`, `x{20,}` → twenty
 *   `x` and `(?:x)*`. For a test (whether a value matches, all Sigma asks) captures do not matter,
 *   so groups become non-capturing, which lets them be copied; a pattern with back-references is
 *   left as it is.
 */

const LETTER = /[A-Za-z]/;
/** Escapes that stand for a class of characters, or a control character: never a letter. */
const CLASS_ESCAPES = 'dDwWsSbBfnrtv0';

/**
 * Whether the escape at `src[i] === '\\'` is one the rewrites do not read through: a back-reference
 * (`\1`, `\k<n>`), or one longer than two characters that may stand for any character (`\x41`,
 * `\u0041`, `\cA`, the octal `\012`). A lone backslash at the end counts as one too.
 */
function opaqueEscape(src: string, i: number): boolean {
  const e = src[i + 1];
  return e === undefined || /[1-9kxuc]/.test(e) || (e === '0' && /\d/.test(src[i + 2] ?? ''));
}

/** A named group's opening (`(?<name>`) at the start of `text`: its name is not text to match. */
const NAMED_GROUP = /^\(\?<[A-Za-z_$][\w$]*>/;

const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
const code = (c: string) => c.charCodeAt(0);
const char = (n: number) => String.fromCharCode(n);
/** A character as a class atom of its own (the characters special inside a class escaped). */
const inClass = (c: string) => (/[\\\]\[^-]/.test(c) ? `\\${c}` : c);

/** The other case of the letters in the range `lo`..`hi`, as class text. */
function otherCaseOf(lo: number, hi: number): string {
  let out = '';
  for (const [from, to, shift] of [
    [0x61, 0x7a, -32],
    [0x41, 0x5a, 32],
  ] as const) {
    const a = Math.max(lo, from);
    const b = Math.min(hi, to);
    if (a <= b) out += a === b ? char(a + shift) : `${char(a + shift)}-${char(b + shift)}`;
  }
  return out;
}

/**
 * A character class at `src[start] === '['` with the other case of each letter added, and where it
 * ends; undefined when an atom may stand for a letter in a way this does not follow (`\x41`,
 * `\u0041`, `\cA`) or a range has a class escape at an end.
 */
function foldClass(src: string, start: number): { text: string; end: number } | undefined {
  let i = start + 1;
  let out = '[';
  if (src[i] === '^') {
    out += '^';
    i++;
  }
  let extra = '';
  /** The next atom: a character (with its code), or a class escape (no code). */
  const atom = (): { text: string; code?: number } | undefined => {
    const c = src[i]!;
    if (c !== '\\') {
      i++;
      return { text: inClass(c), code: code(c) };
    }
    if (opaqueEscape(src, i)) return undefined;
    const e = src[i + 1]!;
    i += 2;
    if (CLASS_ESCAPES.includes(e)) return { text: `\\${e}`, ...(e === 'b' ? { code: 8 } : {}) };
    return { text: inClass(e), code: code(e) };
  };
  while (i < src.length && src[i] !== ']') {
    const lo = atom();
    if (!lo) return undefined;
    if (src[i] === '-' && i + 1 < src.length && src[i + 1] !== ']') {
      i++;
      const hi = atom();
      if (!hi || lo.code === undefined || hi.code === undefined) return undefined;
      out += `${lo.text}-${hi.text}`;
      extra += otherCaseOf(lo.code, hi.code);
      continue;
    }
    out += lo.text;
    if (lo.code !== undefined && LETTER.test(char(lo.code))) extra += other(char(lo.code));
  }
  if (i >= src.length) return undefined;
  return { text: `${out}${extra}]`, end: i + 1 };
}

/**
 * The JavaScript pattern `source` (no `u` flag) written so that without `i` it matches what it
 * matches with `i`; undefined when it cannot be done exactly here (non-ASCII text, escapes that may
 * stand for a letter, back-references, which compare case-insensitively), and the pattern keeps `i`.
 */
export function caseFolded(source: string): string | undefined {
  if (/[^\x00-\x7f]/.test(source)) return undefined;
  let out = '';
  for (let i = 0; i < source.length;) {
    const c = source[i]!;
    if (c === '\\') {
      if (opaqueEscape(source, i)) return undefined;
      const e = source[i + 1]!;
      out += CLASS_ESCAPES.includes(e) || !LETTER.test(e) ? `\\${e}` : `[${e}${other(e)}]`;
      i += 2;
      continue;
    }
    if (c === '[') {
      const cls = foldClass(source, i);
      if (!cls) return undefined;
      out += cls.text;
      i = cls.end;
      continue;
    }
    const named = NAMED_GROUP.exec(source.slice(i, i + 256));
    if (named) {
      out += named[0];
      i += named[0].length;
      continue;
    }
    out += LETTER.test(c) ? `[${c}${other(c)}]` : c;
    i++;
  }
  return out;
}

/**
 * How many copies the linear engine makes of a repeated atom at most: a counted repetition, or
 * counted repetitions nested in each other, multiplying to more it refuses (`x{n,}` counts n + 1).
 */
const REPLICATION_LIMIT = 16;
/** The longest pattern unrolling may make; past it the pattern is left as it is. */
const UNROLLED_MAX_LENGTH = 32_768;
const QUANTIFIER = /^\{(\d{1,5})(,(\d{0,5}))?\}\??/;

/**
 * `source` (no `u` flag) with every counted repetition the linear engine would refuse written out
 * (its count, or its count times those nested in it, above REPLICATION_LIMIT), and its groups
 * non-capturing, matching the same values (for a test, not for captures); `source` itself when it
 * has none; undefined when it cannot be done exactly (back-references, a repetition of a
 * lookaround or an anchor, or a result longer than UNROLLED_MAX_LENGTH).
 */
export function unrolled(source: string): string | undefined {
  let out = '';
  /** Where the last atom starts in `out` (undefined: none to repeat), and the copies nested in it. */
  let atom: number | undefined;
  let atomCopies = 1;
  /** Open groups: where each starts, whether a quantifier may follow it, the most copies nested in it. */
  const groups: Array<{ at: number; repeatable: boolean; copies: number }> = [];
  const nested = (copies: number) => {
    const open = groups.at(-1);
    if (open && copies > open.copies) open.copies = copies;
  };
  let unrolledAny = false;
  for (let i = 0; i < source.length;) {
    const c = source[i]!;
    if (c === '\\') {
      if (opaqueEscape(source, i)) return undefined;
      atom = /[bB]/.test(source[i + 1]!) ? undefined : out.length;
      atomCopies = 1;
      out += source.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (c === '[') {
      let j = i + 1;
      if (source[j] === '^') j++;
      while (j < source.length && source[j] !== ']') j += source[j] === '\\' ? 2 : 1;
      if (j >= source.length) return undefined;
      atom = out.length;
      atomCopies = 1;
      out += source.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '(') {
      const look = /^\(\?<?[=!]/.exec(source.slice(i, i + 4));
      const named = NAMED_GROUP.exec(source.slice(i, i + 256));
      groups.push({ at: out.length, repeatable: !look, copies: 1 });
      // A lookaround as written; any other group non-capturing, so that it can be copied (names may not repeat).
      const head = look?.[0] ?? named?.[0] ?? (source[i + 1] === '?' ? '(?:' : '(');
      out += look ? head : '(?:';
      i += head.length;
      atom = undefined;
      continue;
    }
    if (c === ')') {
      const open = groups.pop();
      if (!open) return undefined;
      out += ')';
      atom = open.repeatable ? open.at : undefined;
      atomCopies = open.copies;
      nested(open.copies);
      i++;
      continue;
    }
    if (c === '{') {
      const q = QUANTIFIER.exec(source.slice(i));
      if (q) {
        const min = Number(q[1]);
        const max = q[2] === undefined ? min : q[3] === '' ? Infinity : Number(q[3]);
        if (atom === undefined || max < min) return undefined;
        const copies = Math.max(1, max === Infinity ? min + 1 : max) * atomCopies;
        if (copies > REPLICATION_LIMIT) {
          const x = out.slice(atom);
          const optionals = max === Infinity ? 1 : max - min;
          if (atom + (x.length + 5) * (min + optionals) > UNROLLED_MAX_LENGTH) return undefined;
          let tail = max === Infinity ? `(?:${x})*` : '';
          for (let k = 0; max !== Infinity && k < optionals; k++) tail = `(?:${x}${tail})?`;
          out = out.slice(0, atom) + x.repeat(min) + tail;
          unrolledAny = true;
        } else {
          out += q[0];
          nested(copies);
        }
        atom = undefined;
        i += q[0].length;
        continue;
      }
    }
    // `^`, `$`, `|`, and the quantifiers `*`, `+`, `?` (and a lazy `?` after them) repeat nothing further.
    atom = /[\^$|*+?]/.test(c) ? undefined : out.length;
    atomCopies = 1;
    out += c;
    i++;
  }
  if (groups.length > 0) return undefined;
  return unrolledAny ? out : source;
}

/**
 * A translated pattern in the form V8's linear engine takes where that can be done exactly (see above), else as it is.
 */
export function linearForm(source: string, flags: string): { source: string; flags: string } {
  const folded = flags.includes('i') ? caseFolded(source) : undefined;
  const cased = folded !== undefined ? { source: folded, flags: flags.replace('i', '') } : { source, flags };
  const linear = { ...cased, source: unrolled(cased.source) ?? cased.source };
  if (linear.source === source) return linear;
  try {
    // A rewrite is meant to be exact; should one ever not compile, the rule runs as written, not broken.
    new RegExp(linear.source, linear.flags);
    return linear;
  } catch {
    return { source, flags };
  }
}
