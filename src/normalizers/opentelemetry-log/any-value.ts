import { type Decoded, fail, isAbsent, isObject, ok, setOwn } from './decoded.js';

/**
 * Decoding of OTLP/JSON `AnyValue` and `KeyValue` lists (common.proto) into plain JSON values:
 * strings, booleans, numbers, arrays and objects. int64 beyond 2^53 stays a decimal string, doubles
 * NaN/Infinity stay the strings proto3 JSON uses for them, bytes stay base64 text.
 */

/** Deeper nesting is refused: no real log needs it, and unbounded recursion could exhaust the stack. */
export const MAX_ANY_VALUE_DEPTH = 64;

const VARIANTS = [
  'stringValue',
  'boolValue',
  'intValue',
  'doubleValue',
  'arrayValue',
  'kvlistValue',
  'bytesValue',
] as const;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);
const DOUBLE_TEXT = /^-?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Decodes one AnyValue; `{}` or an absent value is null (the OTLP "no value"). */
export function decodeAnyValue(value: unknown, path: string, depth = 0): Decoded<unknown> {
  if (isAbsent(value)) return ok(null);
  if (!isObject(value)) return fail(path, 'expected an AnyValue object');
  if (depth > MAX_ANY_VALUE_DEPTH) return fail(path, `nested deeper than ${MAX_ANY_VALUE_DEPTH} levels`);
  const set = VARIANTS.filter((k) => !isAbsent(value[k]));
  if (set.length === 0) return ok(null);
  if (set.length > 1) return fail(path, `more than one AnyValue variant set (${set.join(', ')})`);
  const kind = set[0]!;
  const inner = value[kind];
  const where = `${path}.${kind}`;
  switch (kind) {
    case 'stringValue':
      return typeof inner === 'string' ? ok(inner) : fail(where, 'expected a string');
    case 'boolValue':
      return typeof inner === 'boolean' ? ok(inner) : fail(where, 'expected true or false');
    case 'intValue':
      return decodeInt64(inner, where);
    case 'doubleValue':
      return decodeDouble(inner, where);
    case 'bytesValue':
      return typeof inner === 'string' && BASE64.test(inner) ? ok(inner) : fail(where, 'expected base64 text');
    case 'arrayValue':
      return decodeArrayValue(inner, where, depth);
    case 'kvlistValue':
      return decodeKvlistValue(inner, where, depth);
  }
}

/**
 * Decodes a `[{key, value}]` list into one object. Keys MUST be unique (common.proto) but receiver
 * behaviour on duplicates is undefined: the first occurrence wins, as in the Collector's pdata `Get`.
 */
export function decodeKeyValues(list: unknown, path: string, depth = 0): Decoded<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (isAbsent(list)) return ok(out);
  if (!Array.isArray(list)) return fail(path, 'expected an array of {key, value}');
  for (const [i, item] of list.entries()) {
    const where = `${path}[${i}]`;
    if (!isObject(item)) return fail(where, 'expected a {key, value} object');
    const key = isAbsent(item.key) ? '' : item.key;
    if (typeof key !== 'string') return fail(`${where}.key`, 'expected a string');
    const decoded = decodeAnyValue(item.value, `${where}.value`, depth + 1);
    if (!decoded.ok) return decoded;
    if (!Object.hasOwn(out, key)) setOwn(out, key, decoded.value);
  }
  return ok(out);
}

/** int64 as a decimal string or a JSON number; a number is safe only below 2^53, so larger values stay text. */
function decodeInt64(value: unknown, path: string): Decoded<number | string> {
  let big: bigint;
  // A JSON number above 2^53 was already rounded by the JSON parser; BigInt keeps exactly what arrived.
  if (typeof value === 'number' && Number.isInteger(value)) big = BigInt(value);
  else if (typeof value === 'string' && /^-?\d{1,20}$/.test(value)) big = BigInt(value);
  else return fail(path, 'expected an int64 as a decimal string or integer');
  if (big < INT64_MIN || big > INT64_MAX) return fail(path, 'outside the int64 range');
  return ok(big >= -SAFE_MAX && big <= SAFE_MAX ? Number(big) : big.toString());
}

/** A double as a JSON number, a numeric string, or one of proto3 JSON's `NaN`/`Infinity`/`-Infinity` (kept as text). */
function decodeDouble(value: unknown, path: string): Decoded<number | string> {
  if (typeof value === 'number' && Number.isFinite(value)) return ok(value);
  if (value === 'NaN' || value === 'Infinity' || value === '-Infinity') return ok(value);
  if (typeof value === 'string' && DOUBLE_TEXT.test(value) && Number.isFinite(Number(value))) return ok(Number(value));
  return fail(path, 'expected a number, "NaN", "Infinity" or "-Infinity"');
}

function decodeArrayValue(value: unknown, path: string, depth: number): Decoded<unknown[]> {
  if (!isObject(value)) return fail(path, 'expected {values: [AnyValue]}');
  if (isAbsent(value.values)) return ok([]);
  if (!Array.isArray(value.values)) return fail(`${path}.values`, 'expected an array');
  const out: unknown[] = [];
  for (const [i, item] of value.values.entries()) {
    const decoded = decodeAnyValue(item, `${path}.values[${i}]`, depth + 1);
    if (!decoded.ok) return decoded;
    out.push(decoded.value);
  }
  return ok(out);
}

function decodeKvlistValue(value: unknown, path: string, depth: number): Decoded<Record<string, unknown>> {
  if (!isObject(value)) return fail(path, 'expected {values: [KeyValue]}');
  return decodeKeyValues(value.values, `${path}.values`, depth);
}
