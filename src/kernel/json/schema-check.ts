import * as v from 'valibot';

/**
 * A valibot schema compiled into a plain predicate, for the happy path of validating what clients
 * send in bulk (batches of events, collector envelopes).
 *
 * valibot builds a new output object for every object and array it validates, even when nothing
 * is transformed; for a batch of 1,000 events that copy and its garbage cost about as much as
 * parsing the body. When `check(value)` is true, `v.safeParse(schema, value)` succeeds with an
 * output deep-equal to `value`, so the caller may keep `value` itself. When it is false, nothing is
 * known: the caller asks valibot, which decides and names the issues. The schema stays the one
 * source of truth: a schema using anything this module does not know (a transformation, a
 * default, an action it has no rule for) does not compile, and validation goes through valibot.
 *
 * Rules mirror valibot 1.x's `~run` of each kind, and are stricter where that is simpler: an
 * object or record is a plain object (as JSON.parse makes them: not an array, no other prototype),
 * its keys are its own, and a record refuses the keys valibot would silently drop from its output
 * (`__proto__`, `prototype`, `constructor`).
 * tests/json/schema-check.property.test.ts holds the two equal on generated values.
 */
export type Check = (value: unknown) => boolean;

type AnySchema = v.GenericSchema & Record<string, unknown>;
type AnyItem = { kind: string; type: string; requirement?: unknown } & Record<string, unknown>;

const hasOwn = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** An object valibot's object and record schemas would rebuild as it is: not an array, not of another prototype. */
const isPlainObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && Object.getPrototypeOf(x) === Object.prototype;

/** Keys valibot's record leaves out of its output: a record holding one is not passed through. */
const DROPPED_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/** valibot's SameValueZero, as its literal uses. */
const sameValueZero = (a: unknown, b: unknown): boolean => a === b || (Number.isNaN(a) && Number.isNaN(b));

class NotCompilable extends Error {}

function action(item: AnyItem): Check {
  const r = item.requirement;
  switch (item.type) {
    case 'check':
    case 'integer':
    case 'safe_integer':
      return r as Check;
    case 'regex':
      // A global or sticky expression keeps state between tests, so a second test could answer otherwise.
      if ((r as RegExp).global || (r as RegExp).sticky) throw new NotCompilable('stateful regex');
      return (x) => (r as RegExp).test(x as string);
    case 'min_length':
      return (x) => (x as { length: number }).length >= (r as number);
    case 'max_length':
      return (x) => (x as { length: number }).length <= (r as number);
    case 'min_value':
      return (x) => (x as number) >= (r as number);
    case 'max_value':
      return (x) => (x as number) <= (r as number);
    default:
      throw new NotCompilable(`action ${item.type}`);
  }
}

function all(checks: readonly Check[]): Check {
  if (checks.length === 1) return checks[0]!;
  return (x) => {
    for (let i = 0; i < checks.length; i++) if (!checks[i]!(x)) return false;
    return true;
  };
}

function strictObject(entries: Record<string, AnySchema>): Check {
  const keys = Object.keys(entries);
  for (const k of keys) if (k in Object.prototype) throw new NotCompilable(`entry ${k}`);
  const checks = keys.map((k) => compile(entries[k]!));
  const optional = keys.map((k) => entries[k]!.type === 'optional');
  return (x) => {
    if (!isPlainObject(x)) return false;
    const o = x;
    for (const k in o) if (!hasOwn(entries, k) || !hasOwn(o, k)) return false;
    for (let i = 0; i < keys.length; i++) {
      const value = o[keys[i]!];
      if (value === undefined ? !optional[i] : !checks[i]!(value)) return false;
    }
    return true;
  };
}

function record(key: AnySchema, value: AnySchema): Check {
  const keyCheck = key.type === 'string' && !key.pipe ? undefined : compile(key);
  const valueCheck = value.type === 'unknown' && !value.pipe ? undefined : compile(value);
  return (x) => {
    // valibot would copy an array's entries into an object.
    if (!isPlainObject(x)) return false;
    const o = x;
    for (const k in o) {
      if (DROPPED_KEYS.has(k) || !hasOwn(o, k)) return false;
      if (keyCheck && !keyCheck(k)) return false;
      if (valueCheck && !valueCheck(o[k])) return false;
    }
    return true;
  };
}

function schema(s: AnySchema): Check {
  // A default or fallback would put a value the input did not have into the output.
  if (s.default !== undefined || s.fallback !== undefined) throw new NotCompilable(`${s.type} with a default`);
  switch (s.type) {
    case 'string':
      return (x) => typeof x === 'string';
    case 'number':
      return (x) => typeof x === 'number' && !Number.isNaN(x);
    case 'boolean':
      return (x) => typeof x === 'boolean';
    case 'null':
      return (x) => x === null;
    case 'unknown':
      return () => true;
    case 'literal': {
      const l = s.literal;
      return (x) => sameValueZero(x, l);
    }
    case 'picklist': {
      const options = s.options as unknown[];
      return (x) => options.includes(x);
    }
    case 'custom':
      return s.check as Check;
    case 'optional': {
      const inner = compile(s.wrapped as AnySchema);
      return (x) => x === undefined || inner(x);
    }
    case 'nullable': {
      const inner = compile(s.wrapped as AnySchema);
      return (x) => x === null || inner(x);
    }
    case 'union': {
      // valibot keeps the first option that succeeds; each compiled option passes its input through, so any one will
      // do.
      const options = (s.options as AnySchema[]).map(compile);
      return (x) => options.some((o) => o(x));
    }
    case 'array': {
      const item = compile(s.item as AnySchema);
      return (x) => {
        if (!Array.isArray(x)) return false;
        for (let i = 0; i < x.length; i++) if (!item(x[i])) return false;
        return true;
      };
    }
    case 'strict_object':
      return strictObject(s.entries as Record<string, AnySchema>);
    case 'record':
      return record(s.key as AnySchema, s.value as AnySchema);
    default:
      throw new NotCompilable(`schema ${s.type}`);
  }
}

function compile(s: AnySchema): Check {
  if (s.async) throw new NotCompilable('async schema');
  const pipe = s.pipe as AnyItem[] | undefined;
  if (!pipe) return schema(s);
  // A pipe's first item is the schema it was built on; every later schema and action sees the same value.
  return all(
    pipe
      .filter((item) => item.kind !== 'metadata')
      .map((item, i) => {
        if (i === 0 || item.kind === 'schema') return compile(item as unknown as AnySchema);
        if (item.kind === 'validation') return action(item);
        throw new NotCompilable(`${item.kind} ${item.type}`);
      }),
  );
}

const compiled = new WeakMap<object, Check | null>();

/**
 * The compiled predicate of `schema` (cached), or undefined when the schema uses something that
 * may change its input or that this module has no rule for.
 */
export function compiledCheck(s: v.GenericSchema): Check | undefined {
  let c = compiled.get(s);
  if (c === undefined) {
    try {
      c = compile(s as AnySchema);
    } catch (err) {
      if (!(err instanceof NotCompilable)) throw err;
      c = null;
    }
    compiled.set(s, c);
  }
  return c ?? undefined;
}

/**
 * `v.safeParse(schema, value)`, with `value` itself as the output when the compiled check passes
 * it (valibot's output would be an equal copy); valibot decides everything else.
 */
export function safeParseChecked<S extends v.GenericSchema>(schema: S, value: unknown): v.SafeParseResult<S> {
  if (compiledCheck(schema)?.(value))
    return { typed: true, success: true, output: value as v.InferOutput<S>, issues: undefined };
  return v.safeParse(schema, value);
}
