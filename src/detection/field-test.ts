import type { NormalizedEvent } from '../events/normalized-event.js';
import { isIP } from 'node:net';
import { cidrSet, parseCidr } from '../kernel/cidr.js';
import { linearForm } from './linear-form.js';
import { linearTime, translateRegex } from './regex.js';
import { literalSetTest, VALUE_SET_THRESHOLD } from './value-set.js';
import type { Accessor } from './logsources.js';
import type { FieldPlan } from './modifiers.js';
import {
  anchorPattern,
  compilePattern,
  literalPattern,
  parsePattern,
  windashPattern,
  type StringTest,
} from './wildcard.js';

/** Tests the resolved value of one field (undefined when absent) for one field entry of a selection. */
export type FieldTest = (value: unknown, event: NormalizedEvent) => boolean;

type ElementTest = (element: unknown) => boolean;

/** Bounds on one field entry, so a rule cannot make matching unboundedly expensive. */
export const FIELD_LIMITS = { values: 100_000, valueLength: 4096 } as const;

const NUMERIC = /^-?\d{1,30}(\.\d{1,30})?$/;

/** The text a scalar event value is matched as; objects and absent values have none. */
export function scalarText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return undefined;
}

function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  return typeof value === 'string' && NUMERIC.test(value) ? Number(value) : undefined;
}

/** Array-valued fields match when any element matches. */
function anyElement(value: unknown, test: ElementTest): boolean {
  if (!Array.isArray(value)) return test(value);
  for (const item of value) if (test(item)) return true;
  return false;
}

function combine(tests: ElementTest[], all: boolean): (value: unknown) => boolean {
  if (tests.length === 1) {
    const only = tests[0]!;
    return (value) => anyElement(value, only);
  }
  // Loops rather than every/some: no closure per evaluation on the hot path.
  return all
    ? (value) => {
        for (const t of tests) if (!anyElement(value, t)) return false;
        return true;
      }
    : (value) => {
        for (const t of tests) if (anyElement(value, t)) return true;
        return false;
      };
}

function textTest(test: StringTest): ElementTest {
  return (element) => {
    const s = scalarText(element);
    return s !== undefined && test(s);
  };
}

function utf16Bytes(text: string, encoding: FieldPlan['encoding']): Buffer {
  if (encoding === undefined) return Buffer.from(text, 'utf8');
  const le = Buffer.from(text, 'utf16le');
  if (encoding === 'utf16le') return le;
  if (encoding === 'utf16') return Buffer.concat([Buffer.from([0xff, 0xfe]), le]);
  return Buffer.from(le).swap16();
}

/**
 * `base64offset`: the value may sit at any byte offset of the encoded data, so encode it after 0, 1
 * and 2 filler bytes and keep only the characters that depend on the value's bytes alone.
 */
function base64Variants(bytes: Buffer, mode: 'base64' | 'base64offset'): string[] {
  if (mode === 'base64') return [bytes.toString('base64')];
  const variants: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const encoded = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const head = [0, 2, 3][shift]!;
    const tail = [0, 3, 2][(bytes.length + shift) % 3]!;
    const core = encoded.slice(head, encoded.length - tail);
    if (core !== '' && !variants.includes(core)) variants.push(core);
  }
  return variants;
}

function stringPattern(value: string | number | boolean, plan: FieldPlan): ElementTest {
  const text = String(value);
  if (plan.base64) {
    // Encoded text is compared exactly: upper and lower case are different base64 digits.
    const variants = base64Variants(utf16Bytes(text, plan.encoding), plan.base64).map((v) =>
      compilePattern(anchorPattern(literalPattern(v), plan.position), true),
    );
    return textTest((s) => variants.some((t) => t(s)));
  }
  let tokens = parsePattern(text);
  if (plan.windash) tokens = windashPattern(tokens);
  return textTest(compilePattern(anchorPattern(tokens, plan.position), plan.cased));
}

/** Plain equality of one rule value: numbers compare as numbers, booleans as booleans, strings as patterns. */
function valueTest(value: string | number | boolean, plan: FieldPlan): ElementTest {
  const plain = !plan.position && !plan.windash && !plan.base64;
  if (plain && typeof value === 'number') return (e) => numberOf(e) === value;
  if (plain && typeof value === 'boolean') {
    const text = value ? 'true' : 'false';
    return (e) => e === value || (typeof e === 'string' && e.toLowerCase() === text);
  }
  return stringPattern(value, plan);
}

function regexTest(value: unknown, flags: string): ElementTest | string {
  if (typeof value !== 'string') return `'re' needs a string value`;
  const translated = translateRegex(value, flags);
  if (!translated.ok) return `regular expression '${value.slice(0, 200)}' cannot be used: ${translated.error}`;
  // Written, where it can be, in a form V8 can fall back to running in linear time (linear-form.ts).
  const linear = linearForm(translated.source, translated.flags);
  const re = new RegExp(linear.source, linear.flags);
  return textTest((s) => re.test(s));
}

/**
 * Whether a field entry's values include a regular expression V8's linear-time engine cannot run
 * (a lookaround or a back-reference): its cost on a value is then unbounded, so the rule runs off
 * the request thread under a deadline. Values that do not compile are refused elsewhere.
 */
export function backtracks(plan: FieldPlan, raw: unknown): boolean {
  if (plan.operator !== 're') return false;
  for (const value of Array.isArray(raw) ? raw : [raw]) {
    if (typeof value !== 'string') continue;
    const translated = translateRegex(value, plan.regexFlags);
    if (!translated.ok) continue;
    const linear = linearForm(translated.source, translated.flags);
    if (!linearTime(linear.source, linear.flags)) return true;
  }
  return false;
}

function cidrTest(value: unknown): ElementTest | string {
  if (typeof value !== 'string') return `'cidr' needs a network such as 10.0.0.0/8`;
  if (parseCidr(value) === undefined) {
    return isIP(value.split('/')[0] ?? '') === 0
      ? `'${value}' is not an IPv4 or IPv6 network`
      : `'${value}' has an invalid prefix length`;
  }
  const network = cidrSet([value]);
  return (e) => typeof e === 'string' && e.length <= 64 && network.has(e);
}

function compareTest(value: unknown, op: 'gt' | 'gte' | 'lt' | 'lte'): ElementTest | string {
  const bound = numberOf(value);
  if (bound === undefined) return `'${op}' needs a number`;
  const holds = {
    gt: (n: number) => n > bound,
    gte: (n: number) => n >= bound,
    lt: (n: number) => n < bound,
    lte: (n: number) => n <= bound,
  }[op];
  return (e) => {
    const n = numberOf(e);
    return n !== undefined && holds(n);
  };
}

function elementTest(value: string | number | boolean, plan: FieldPlan): ElementTest | string {
  switch (plan.operator) {
    case 're':
      return regexTest(value, plan.regexFlags);
    case 'cidr':
      return cidrTest(value);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte':
      return compareTest(value, plan.operator);
    default:
      return valueTest(value, plan);
  }
}

function fieldrefTest(values: unknown[], plan: FieldPlan, accessor: (name: string) => Accessor): FieldTest | string {
  const accessors: Accessor[] = [];
  for (const v of values) {
    if (typeof v !== 'string' || v === '') return `'fieldref' needs field names`;
    accessors.push(accessor(v));
  }
  const same = (a: unknown, b: unknown): boolean => {
    const x = scalarText(a),
      y = scalarText(b);
    return x !== undefined && y !== undefined && (plan.cased ? x === y : x.toLowerCase() === y.toLowerCase());
  };
  const equal = (value: unknown, event: NormalizedEvent, get: Accessor): boolean => {
    const other = get(event);
    return anyElement(value, (e) => anyElement(other, (o) => same(e, o)));
  };
  if (plan.neq) return (value, event) => value != null && !accessors.some((get) => equal(value, event, get));
  return plan.all
    ? (value, event) => accessors.every((get) => equal(value, event, get))
    : (value, event) => accessors.some((get) => equal(value, event, get));
}

function checkValues(values: unknown[]): string | undefined {
  if (values.length === 0) return 'empty list of values';
  if (values.length > FIELD_LIMITS.values) return `more than ${FIELD_LIMITS.values} values`;
  for (const v of values) {
    if (v !== null && typeof v === 'object') return 'values must be strings, numbers, booleans or null';
    if (typeof v === 'string' && v.length > FIELD_LIMITS.valueLength)
      return `a value longer than ${FIELD_LIMITS.valueLength} characters`;
  }
  if (values.length > 1 && values.includes(null))
    return 'null must be the only value of its field (put it in its own selection)';
  return undefined;
}

/** A value that is plain text: no wildcard and no escape, so it can join a value set. */
function isLiteralText(v: unknown): v is string {
  return typeof v === 'string' && !/[*?\\]/.test(v);
}

/** Value sets replace per-value tests for ORed plain matching (no operator, windash or encoding). */
function setEligible(plan: FieldPlan): boolean {
  return !plan.operator && !plan.windash && !plan.base64 && !(plan.all && !plan.neq);
}

/** Compiles the values of one field entry under its modifier plan into a test, or says what is wrong. */
export function compileFieldTest(
  plan: FieldPlan,
  raw: unknown,
  accessor: (name: string) => Accessor,
): FieldTest | string {
  const values = Array.isArray(raw) ? raw : [raw];
  const problem = checkValues(values);
  if (problem) return problem;
  if (plan.operator === 'exists') {
    const want = values[0];
    if (values.length !== 1 || typeof want !== 'boolean') return `'exists' needs true or false`;
    return (value) => (value !== undefined) === want;
  }
  if (plan.operator === 'fieldref') return fieldrefTest(values, plan, accessor);
  if (values[0] === null) {
    if (plan.operator || plan.position || plan.neq) return 'null cannot be combined with modifiers';
    return (value) => value === undefined || value === null;
  }
  const tests: ElementTest[] = [];
  const literals = setEligible(plan) ? (values as unknown[]).filter(isLiteralText) : [];
  if (literals.length >= VALUE_SET_THRESHOLD) tests.push(textTest(literalSetTest(literals, plan.position, plan.cased)));
  const inSet = new Set(literals.length >= VALUE_SET_THRESHOLD ? literals : []);
  for (const v of values as Array<string | number | boolean>) {
    if (inSet.has(v as string)) continue;
    const test = elementTest(v, plan);
    if (typeof test === 'string') return test;
    tests.push(test);
  }
  const holds = combine(tests, plan.all && !plan.neq);
  // neq: the field is present and equals none of the values.
  return plan.neq ? (value) => value != null && !holds(value) : (value) => holds(value);
}
