import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as v from 'valibot';
import { compiledCheck } from '../../src/kernel/json/schema-check.js';
import { validateRecords } from '../../src/http/batch.js';
import { SubmittedEventSchema } from '../../src/http/routes/events.js';
import { CATEGORIES, EVENT_LIMITS, NormalizedEventSchema, OUTCOMES } from '../../src/events/normalized-event.js';
import { EnvelopeSchema } from '../../src/events/collector-protocol/envelope.js';

/** Arbitrary JSON-like values, with the values JSON cannot carry but a caller might pass. */
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ maxLength: 12 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined),
    fc.constantFrom('', 'x'.repeat(300), 'vigil', 'collector', '2026-02-30T00:00:00Z', '2026-11-22T10:00:00Z', '__proto__', 'constructor', '12', 'ab', Number.NaN, Number.POSITIVE_INFINITY, 1.5, 7),
    fc.record({ a: fc.option(fc.string(), { nil: undefined }), b: fc.option(tie('value')), c: fc.array(fc.oneof(fc.boolean(), tie('value')), { maxLength: 2 }) }, { requiredKeys: ['b', 'c'] }),
    fc.array(fc.record({ k: tie('value') }), { maxLength: 2 }),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'id')), tie('value'), { maxKeys: 3 }),
  ),
}));

const short = fc.string({ minLength: 1, maxLength: 20 });
const time = fc.tuple(fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true }), fc.constantFrom('Z', '+02:00', '-05:30'), fc.constantFrom('', '.5', '.123456789'))
  .map(([d, zone, fraction]) => `${d.toISOString().slice(0, 19)}${fraction}${zone}`);
const freeObject = fc.dictionary(fc.string({ maxLength: 8 }).filter((k) => !['__proto__', 'constructor', 'prototype'].includes(k)), value, { maxKeys: 4, noNullPrototype: true });

/** Valid NormalizedEvents as a client would submit them, optional members present or not. */
const validEvent = fc.record({
  schemaVersion: fc.constant(1),
  id: fc.string({ minLength: 1, maxLength: EVENT_LIMITS.idLength }),
  category: fc.constantFrom(...CATEGORIES),
  class: short,
  activity: short,
  outcome: fc.constantFrom(...OUTCOMES),
  time,
  ingestedAt: time,
  severity: fc.double({ min: 0, max: 10, noNaN: true }),
  source: fc.record({ adapter: short.filter((a) => a !== 'vigil' && a !== 'collector'), instance: short, recordId: short }, { noNullPrototype: true }),
  entityKeys: fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 5 }),
  actor: fc.option(freeObject),
  sourceEndpoint: fc.option(freeObject),
  destinationEndpoint: fc.option(freeObject),
  service: fc.option(freeObject),
  correlation: freeObject,
  attributes: freeObject,
  rawReference: fc.option(fc.oneof(fc.string(), freeObject)),
}, { requiredKeys: ['schemaVersion', 'id', 'category', 'class', 'activity', 'outcome', 'time', 'ingestedAt', 'source', 'entityKeys', 'attributes'], noNullPrototype: true });

const PATHS = [
  ...Object.keys(NormalizedEventSchema.entries).map((k) => [k]),
  ['unknown'], ['source', 'adapter'], ['source', 'extra'], ['entityKeys', '0'], ['attributes', 'a'], ['attributes', 'constructor'],
  ['service', 'name'], ['rawReference', 'x'],
];

/** Sets (or with `undefined` sometimes deletes) the member at `path`, making containers on the way. */
function mutate(event: Record<string, unknown>, path: readonly string[], to: unknown, remove: boolean): void {
  let o: Record<string, unknown> = event;
  for (const k of path.slice(0, -1)) {
    const next = o[k];
    if (typeof next !== 'object' || next === null) return;
    o = next as Record<string, unknown>;
  }
  const last = path.at(-1)!;
  if (remove) delete o[last];
  else Object.defineProperty(o, last, { value: to, enumerable: true, writable: true, configurable: true });
}

const mutated = fc.tuple(validEvent, fc.array(fc.tuple(fc.constantFrom(...PATHS), value, fc.boolean()), { minLength: 1, maxLength: 3 }))
  .map(([event, changes]) => {
    const e = structuredClone(event) as Record<string, unknown>;
    for (const [path, to, remove] of changes) mutate(e, path, to, remove);
    return e;
  });

/** The property: a value the compiled check passes is one valibot accepts, with an output equal to it. Returns whether it passed. */
function agrees(schema: v.GenericSchema, x: unknown): boolean {
  const check = compiledCheck(schema);
  assert.ok(check, 'the schema compiles');
  if (!check(x)) return false;
  const r = v.safeParse(schema, x);
  assert.ok(r.success, `the check passed what valibot refuses: ${JSON.stringify(r.issues?.map((i) => i.message))}`);
  assert.deepStrictEqual(r.output, x);
  return true;
}

describe('compiled schema checks agree with valibot (property)', () => {
  it('pass every valid event, which valibot accepts unchanged', () => {
    const check = compiledCheck(SubmittedEventSchema)!;
    fc.assert(fc.property(validEvent, (e) => {
      assert.equal(check(e), true);
      agrees(SubmittedEventSchema, e);
      // The same event as the edge sees it: parsed from JSON text.
      const parsed = JSON.parse(JSON.stringify(e)) as unknown;
      assert.equal(check(parsed), true);
      agrees(SubmittedEventSchema, parsed);
    }), { numRuns: 300 });
  });

  it('never pass an event valibot refuses or would change', () => {
    let passed = 0;
    let refused = 0;
    fc.assert(fc.property(mutated, (e) => {
      if (agrees(SubmittedEventSchema, e)) passed++;
      else refused++;
      agrees(NormalizedEventSchema, e);
    }), { numRuns: 3000 });
    // Both sides of the property were exercised.
    assert.ok(passed > 100 && refused > 100, `${passed} passed, ${refused} refused`);
  });

  it('never pass a collector envelope valibot refuses or would change', () => {
    const kind = fc.constantFrom('host', 'user', 'process');
    const fact = fc.oneof(
      fc.tuple(kind, short).map(([k, id]) => ({ fact: 'entity', key: `${k}:${id}`, kind: k, attributes: { a: 1 } })),
      fc.tuple(kind, short, kind, short).map(([a, x, b, y]) => ({ fact: 'relationship', from: `${a}:${x}`, to: `${b}:${y}`, type: 'runs_on' })),
    );
    const envelope = fc.record({
      algorithm: fc.constant('Ed25519'),
      payload: fc.record({
        schemaVersion: fc.constant(1),
        collectorId: fc.stringMatching(/^[a-z0-9][a-z0-9.-]{0,20}$/),
        sequence: fc.oneof(fc.integer({ min: 1 }), fc.constant(Number.MAX_SAFE_INTEGER)),
        collectedAt: time,
        facts: fc.array(fact, { maxLength: 3 }),
        events: fc.array(validEvent.map(({ category: _c, outcome: _o, ...rest }) => rest), { maxLength: 3 }),
      }, { noNullPrototype: true }),
      signature: fc.string({ maxLength: 128 }),
    }, { noNullPrototype: true });
    const paths = [
      ['algorithm'], ['signature'], ['extra'], ['payload', 'sequence'], ['payload', 'collectorId'], ['payload', 'collectedAt'], ['payload', 'facts'], ['payload', 'events'],
      ['payload', 'facts', '0', 'key'], ['payload', 'facts', '0', 'kind'], ['payload', 'facts', '0', 'attributes'], ['payload', 'facts', '0', 'fact'],
      ['payload', 'events', '0', 'id'], ['payload', 'events', '0', 'category'], ['payload', 'events', '0', 'time'], ['payload', 'events', '0', 'attributes', 'constructor'],
    ];
    const sequences = fc.constantFrom(0, -1, 1.5, 2 ** 53, Number.NaN);
    let passed = 0;
    let refused = 0;
    fc.assert(fc.property(envelope, fc.array(fc.tuple(fc.constantFrom(...paths), fc.oneof(value, sequences), fc.boolean()), { maxLength: 2 }), (e, changes) => {
      const x = structuredClone(e) as Record<string, unknown>;
      for (const [path, to, remove] of changes) mutate(x, path, to, remove);
      if (agrees(EnvelopeSchema, x)) passed++;
      else refused++;
    }), { numRuns: 2000 });
    assert.ok(passed > 100 && refused > 100, `${passed} passed, ${refused} refused`);
  });

  it('never pass any other value valibot refuses or would change, for each kind of schema they compile', () => {
    const schemas: v.GenericSchema[] = [
      v.record(v.string(), v.unknown()),
      v.record(v.pipe(v.string(), v.maxLength(3)), v.number()),
      v.strictObject({ a: v.optional(v.string()), b: v.nullable(v.number()), c: v.array(v.boolean()) }),
      v.union([v.literal(1), v.picklist(['x', 'y']), v.null()]),
      v.pipe(v.unknown(), v.check((x) => !Array.isArray(x)), v.record(v.string(), v.unknown())),
      v.custom<string>((x) => typeof x === 'string' && x.startsWith('a')),
      v.pipe(v.number(), v.minValue(0), v.maxValue(10)),
      v.pipe(v.number(), v.integer()),
      v.pipe(v.string(), v.regex(/^\d+$/), v.minLength(2)),
      v.array(v.strictObject({ k: v.unknown() })),
      v.nullable(v.string()),
    ];
    // Values at the edges of each kind, every one against every schema.
    const edges: unknown[] = [
      Number.NaN, Number.POSITIVE_INFINITY, -0, undefined, null, '', 'a', '12', [], {}, Object.create(null), [1], [{ k: undefined }],
      { b: Number.NaN, c: [] }, { b: undefined, c: [] }, { a: undefined, b: null, c: [true] }, { a: 1, b: null, c: [] }, { b: 1, c: [true, 'x'] },
    ];
    for (const x of edges) for (const s of schemas) agrees(s, x);
    const passed = new Set<v.GenericSchema>();
    fc.assert(fc.property(value, (x) => {
      for (const s of schemas) if (agrees(s, x)) passed.add(s);
    }), { numRuns: 3000 });
    assert.deepEqual(schemas.filter((s) => !passed.has(s)), [], 'every schema passed some value');
  });

  it('leave every key valibot would drop to valibot', () => {
    const check = compiledCheck(SubmittedEventSchema)!;
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const e = JSON.parse(JSON.stringify(validSample()).replace('"attributes":{', `"attributes":{"${key}":{"polluted":true},`)) as Record<string, unknown>;
      assert.ok(Object.prototype.hasOwnProperty.call(e.attributes, key), key);
      assert.equal(check(e), false, key);
      // valibot accepts it and leaves the key out; the batch keeps valibot's output.
      const [kept] = validateRecords(SubmittedEventSchema, [e]);
      assert.equal(Object.prototype.hasOwnProperty.call(kept!.attributes, key), false, key);
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    }
  });

  it('do not compile a schema that may change its input, so valibot decides', () => {
    for (const s of [
      v.pipe(v.string(), v.transform((x) => x.trim())),
      v.optional(v.string(), 'default'),
      v.strictObject({ a: v.optional(v.number(), 1) }),
      v.object({ a: v.string() }),
      v.exactOptional(v.string()),
      v.pipe(v.string(), v.trim()),
      v.date(),
      v.pipe(v.string(), v.regex(/a/g)),
    ]) assert.equal(compiledCheck(s as v.GenericSchema), undefined);
  });

  it('keep a record the check passes as it is, and valibot decides the rest', () => {
    const e = validSample();
    const out = validateRecords(SubmittedEventSchema, [e, { ...validSample(), id: 'b' }]);
    assert.equal(out[0], e);
    assert.throws(() => validateRecords(SubmittedEventSchema, [e, { ...e, severity: 11 }]), /invalid records/);
  });
});

function validSample(): Record<string, unknown> {
  return {
    schemaVersion: 1, id: 'a', category: 'network', class: 'network_connection', activity: 'traffic', outcome: 'success',
    time: '2026-11-22T10:00:00Z', ingestedAt: '2026-11-22T10:00:01.5+01:00', severity: 3,
    source: { adapter: 'zeek', instance: 'conn', recordId: 'r1' }, entityKeys: ['ip:10.0.0.1'],
    attributes: { proto: 'tcp', nested: { deeper: [1, 2] } },
  };
}
