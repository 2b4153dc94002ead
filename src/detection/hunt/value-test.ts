import { cidrSet, parseCidr } from '../../kernel/cidr.js';
import { nanosFromIso } from '../../kernel/time.js';
import { scalarText } from '../field-test.js';
import { compilePattern, type PatternToken } from '../wildcard.js';
import type { HuntRangeOp, HuntValue } from './ast.js';

/** Tests one leaf of an event. */
export type LeafTest = (leaf: unknown) => boolean;

/** The numbers Sigma compares as numbers (field-test.ts): a plain decimal. */
const NUMERIC = /^-?\d{1,30}(\.\d{1,30})?$/;

/** A leaf as a number: a finite number or a plain decimal string. */
export function numberOf(leaf: unknown): number | undefined {
  if (typeof leaf === 'number') return Number.isFinite(leaf) ? leaf : undefined;
  return typeof leaf === 'string' && NUMERIC.test(leaf) ? Number(leaf) : undefined;
}

const DATE = /^(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2})(:\d{2}(?:\.\d{1,9})?)?)?([Zz]|[+-]\d{2}:\d{2})?$/;

/** A date or date-time (zone optional: UTC) as nanoseconds since the epoch, or undefined. */
export function instantOf(text: string): bigint | undefined {
  const m = DATE.exec(text);
  if (!m) return undefined;
  return nanosFromIso(`${m[1]}T${m[2] ?? '00:00'}${m[3] ?? ':00'}${(m[4] ?? 'Z').toUpperCase()}`);
}

/** The text of a value without wildcards (quoted, or unquoted in one part). */
export function plainText(v: HuntValue): string | undefined {
  if (v.quoted) return v.text;
  return v.parts.length === 1 ? v.parts[0] : undefined;
}

/** A CIDR range written with its prefix (`10.0.0.0/8`, `2001:db8::/32`). */
export function isCidr(text: string): boolean {
  return text.includes('/') && parseCidr(text) !== undefined;
}

function patternTokens(parts: readonly string[], around: boolean): PatternToken[] {
  const tokens: PatternToken[] = around ? [{ kind: 'any' }] : [];
  parts.forEach((text, i) => {
    if (i > 0) tokens.push({ kind: 'any' });
    if (text !== '') tokens.push({ kind: 'text', text });
  });
  if (around) tokens.push({ kind: 'any' });
  return tokens;
}

function textTest(tokens: PatternToken[], cased: boolean): LeafTest {
  const test = compilePattern(tokens, cased);
  return (leaf) => {
    const s = scalarText(leaf);
    return s !== undefined && test(s);
  };
}

/**
 * The test of `field:value` on one leaf: CIDR containment for a range against IP addresses, numeric
 * equality for an unquoted number, else text equality or a `*` pattern, case-insensitive unless `cased`
 * (the index fields).
 */
export function valueTest(v: HuntValue, cased: boolean): LeafTest {
  if (!v.quoted && v.parts.length > 1) return textTest(patternTokens(v.parts, false), cased);
  const text = v.quoted ? v.text : v.parts[0]!;
  if (!cased && isCidr(text)) {
    const set = cidrSet([text]);
    // As Sigma's `cidr` (field-test.ts): an address of at most 64 characters, zone ids ignored.
    return (leaf) => typeof leaf === 'string' && leaf.length <= 64 && set.has(leaf);
  }
  if (!cased && !v.quoted && NUMERIC.test(text)) {
    const n = Number(text);
    return (leaf) => numberOf(leaf) === n;
  }
  return textTest(text === '' ? [] : [{ kind: 'text', text }], cased);
}

/** Free text: the value found anywhere in a string or number leaf, case-insensitive (`*` still a wildcard). */
export function freeTextTest(v: HuntValue): LeafTest {
  const test = compilePattern(patternTokens(v.quoted ? [v.text] : v.parts, true), false);
  return (leaf) => (typeof leaf === 'string' || typeof leaf === 'number') && test(String(leaf));
}

function compare<T>(op: HuntRangeOp, a: T, b: T): boolean {
  if (op === '<') return a < b;
  if (op === '<=') return a <= b;
  if (op === '>') return a > b;
  return a >= b;
}

/**
 * `field op value` on one leaf: a date-time value compares instants (leaves that read as dates), a
 * number numbers (numeric leaves), anything else strings, lower-cased unless `cased`.
 */
export function rangeTest(op: HuntRangeOp, v: HuntValue, cased: boolean): LeafTest {
  const text = plainText(v) ?? '';
  const instant = instantOf(text);
  if (instant !== undefined)
    return (leaf) => {
      const at = typeof leaf === 'string' ? instantOf(leaf) : undefined;
      return at !== undefined && compare(op, at, instant);
    };
  if (NUMERIC.test(text)) {
    const n = Number(text);
    return (leaf) => {
      const x = numberOf(leaf);
      return x !== undefined && compare(op, x, n);
    };
  }
  const bound = cased ? text : text.toLowerCase();
  return (leaf) => typeof leaf === 'string' && compare(op, cased ? leaf : leaf.toLowerCase(), bound);
}
