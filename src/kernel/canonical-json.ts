/**
 * RFC 8785 JSON Canonicalization Scheme (JCS) over values that came from JSON.parse: object keys
 * sorted by UTF-16 code units, no whitespace, numbers in ECMAScript shortest form, strings escaped
 * as ECMAScript JSON.stringify does (which RFC 8785 adopts).
 */

/** A value JCS cannot serialize (non-finite number, lone surrogate, non-JSON type). */
export class CanonicalizationError extends Error {
  override readonly name = 'CanonicalizationError';
}

/**
 * A lone surrogate as `JSON.stringify` writes it (such as `\ud800`, lowercase), after an even run of
 * backslashes so an escaped backslash followed by the text `ud800` is not mistaken for one.
 */
const ESCAPED_LONE_SURROGATE = /(?:^|[^\\])(?:\\\\)*\\ud[89a-f][0-9a-f]{2}/;

/** Quoted object keys: the same few names repeat across every event of a payload. */
const quotedKeys = new Map<string, string>();

function quoteKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (quotedKeys.size < 10_000) quotedKeys.set(k, q);
  }
  return q;
}

/** Whether every property of an object is a primitive or an array of primitives (Zeek, journal lines). */
function isFlat(obj: Record<string, unknown>, keys: readonly string[]): boolean {
  for (const k of keys) {
    const v = obj[k];
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v)) return false;
    for (const x of v) if (x !== null && typeof x === 'object') return false;
  }
  return true;
}

/**
 * The one writer of both forms. Strict is RFC 8785 and throws on what is not JSON; lenient writes
 * what is not JSON as JSON.stringify does (undefined properties left out, undefined and non-finite
 * numbers as null), so any value has an identity.
 */
function write(value: unknown, strict: boolean): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (strict && !Number.isFinite(value)) throw new CanonicalizationError('number is not finite');
      // ECMAScript Number::toString is the RFC 8785 number form; -0 serializes as 0.
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      // Hot path of ingestion (every raw record's identity): plain loops, no intermediate arrays.
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) out += (i > 0 ? ',' : '') + write(value[i], strict);
        return `${out}]`;
      }
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj);
      let sorted = true;
      for (let i = 1; i < keys.length && sorted; i++) sorted = keys[i - 1]! < keys[i]!;
      // Default sort compares UTF-16 code units, exactly as RFC 8785 section 3.2.3 asks.
      if (!sorted) keys.sort();
      // A flat record: the native serializer with the sorted key list gives the same text.
      if (!strict && isFlat(obj, keys)) return JSON.stringify(obj, keys);
      let out = '{';
      let first = true;
      for (const k of keys) {
        const v = obj[k];
        if (!strict && (v === undefined || typeof v === 'function' || typeof v === 'symbol')) continue;
        out += `${first ? '' : ','}${quoteKey(k)}:${write(v, strict)}`;
        first = false;
      }
      return `${out}}`;
    }
    default: {
      if (strict) throw new CanonicalizationError(`a ${typeof value} is not a JSON value`);
      const s = JSON.stringify(value);
      return s === undefined ? 'null' : s;
    }
  }
}

/**
 * Canonical JSON of any value, for identities and equality (a raw record's id, a rule's id, a
 * correlation key): RFC 8785's text for every JSON value, with what is not JSON written as
 * JSON.stringify writes it instead of refused. Signatures use `canonicalize`, which refuses it.
 */
export function canonicalJson(value: unknown): string {
  return write(value, false);
}

/** Thrown inside `sortedTree` when an object has an array-index key, which engines enumerate numerically. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;
const UNSORTABLE = Symbol('unsortable');

/**
 * The value with every object's keys in JCS order, copying only objects whose keys are out of
 * order. Throws UNSORTABLE for an array-index key (`"10"`), which no object can hold in string order.
 */
function sortedTree(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new CanonicalizationError('number is not finite');
    return value;
  }
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const s = sortedTree(value[i]);
      if (s !== value[i]) (copy ??= value.slice())[i] = s;
    }
    return copy ?? value;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let changed = false;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const c = k.charCodeAt(0);
    if (c >= 48 && c <= 57 && INDEX_KEY.test(k)) throw UNSORTABLE;
    if (i > 0 && !(keys[i - 1]! < k)) changed = true;
  }
  const children = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) {
    const v = obj[keys[i]!];
    const s = sortedTree(v);
    children[i] = s;
    if (s !== v) changed = true;
  }
  if (!changed) return obj;
  const order = keys.map((_, i) => i).sort((x, y) => (keys[x]! < keys[y]! ? -1 : 1));
  // No prototype: a `__proto__` key (JSON.parse makes it an own property) must stay a key, not set a prototype.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const i of order) out[keys[i]!] = children[i];
  return out;
}

/**
 * The JCS text of a JSON value; throws CanonicalizationError for what I-JSON forbids (lone surrogates, non-finite
 * numbers).
 */
export function canonicalize(value: unknown): string {
  let out: string;
  try {
    // Fast path: with keys in order, the engine's JSON.stringify writes exactly RFC 8785
    // (ECMAScript number and string serialization), natively.
    out = JSON.stringify(sortedTree(value));
  } catch (err) {
    if (err !== UNSORTABLE) throw err;
    out = write(value, true);
  }
  return withoutLoneSurrogates(out);
}

/**
 * The JCS text of a value parsed from JSON text whose every object lists its keys in JCS order,
 * unescaped and none an array index (strict-json.ts says so as `keysInOrder`): the parsed objects
 * keep that order, so the engine's JSON.stringify alone writes RFC 8785. Text with `null` in it
 * takes the general path, which tells a null from a number JSON.parse read as Infinity (`1e400`),
 * which JSON.stringify would also write as `null`.
 */
export function canonicalizeInOrder(value: unknown): string {
  const out = JSON.stringify(value);
  return out.includes('null') ? canonicalize(value) : withoutLoneSurrogates(out);
}

/** Checked once on the output: well-formed JSON.stringify escapes exactly the lone surrogates this way. */
function withoutLoneSurrogates(text: string): string {
  // Most texts have no escaped surrogate at all: a native substring search rules that out first.
  if (text.includes('\\ud') && ESCAPED_LONE_SURROGATE.test(text))
    throw new CanonicalizationError('string contains a lone surrogate');
  return text;
}

/** The JCS bytes (UTF-8) of a JSON value. */
export function canonicalBytes(value: unknown): Uint8Array {
  return Buffer.from(canonicalize(value), 'utf8');
}
