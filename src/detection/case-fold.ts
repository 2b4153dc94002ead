/**
 * V8's linear-time regex engine, which Vigil lets V8 fall back to when a match backtracks too much
 * (src/detection/regex.ts), does not take the `i` flag: a case-insensitive Sigma `re` (`(?i)`,
 * `|re|i`, common in SigmaHQ) would backtrack without bound on log text an attacker writes. The
 * Invoke-Obfuscation rules' `(?i)(set).*&&\s?set.*(environment|invoke|\$?\{?input).*&&.*"` is
 * cubic: a 5,600-character command line took 0.46 s, one of 28,000 would take about a minute.
 *
 * Without the `u` flag, `i` makes an ASCII letter match only itself in either case (a non-ASCII
 * character never folds to an ASCII one), so an ASCII pattern is the same pattern without `i` when
 * each letter becomes both of its cases: `a` → `[aA]`, `[a-f]` → `[a-fA-F]`, `[^x]` → `[^xX]`.
 * That pattern the linear engine takes.
 */

const LETTER = /[A-Za-z]/;
/** Escapes that stand for a class of characters, or a control character: never a letter. */
const CLASS_ESCAPES = 'dDwWsSbBfnrtv0';

const other = (c: string) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());
const code = (c: string) => c.charCodeAt(0);
const char = (n: number) => String.fromCharCode(n);
/** A character as a class atom of its own (the characters special inside a class escaped). */
const inClass = (c: string) => (/[\\\]\[^-]/.test(c) ? `\\${c}` : c);

/** The other case of the letters in the range `lo`..`hi`, as class text. */
function otherCaseOf(lo: number, hi: number): string {
  let out = '';
  for (const [from, to, shift] of [[0x61, 0x7a, -32], [0x41, 0x5a, 32]] as const) {
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
  if (src[i] === '^') { out += '^'; i++; }
  let extra = '';
  /** The next atom: a character (with its code), or a class escape (no code). */
  const atom = (): { text: string; code?: number } | undefined => {
    const c = src[i]!;
    if (c !== '\\') { i++; return { text: inClass(c), code: code(c) }; }
    const e = src[i + 1];
    if (e === undefined || 'xuck'.includes(e) || /[1-9]/.test(e)) return undefined;
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
      const e = source[i + 1];
      if (e === undefined || 'xuck'.includes(e) || /[1-9]/.test(e)) return undefined;
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
    if (source.startsWith('(?<', i) && LETTER.test(source[i + 3] ?? '')) {
      // A named group: its name is not text to match.
      const close = source.indexOf('>', i);
      if (close < 0) return undefined;
      out += source.slice(i, close + 1);
      i = close + 1;
      continue;
    }
    out += LETTER.test(c) ? `[${c}${other(c)}]` : c;
    i++;
  }
  return out;
}
