import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseStrictJson, parseStrictJsonInPieces, parseStrictJsonWhole } from '../../src/kernel/json/strict-json.js';
import { canonicalize } from '../../src/kernel/canonical-json.js';

/**
 * Envelopes large enough that their largest array is parsed in pieces, and the ways they can be
 * wrong. Objects are lists of members, so that duplicate keys and any order can be written.
 */
type Json = { members: Array<[string, Json]> } | Json[] | string;

/** Strings that look like cuts, stand-ins or string ends, and everything else a string may hold. */
const hostile = fc.oneof(
  fc.constantFrom('},{', '"},{"', '[\n]', '[]', '\\"', '\\\\', 'é},{ü', '😀', '\u2028'),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
);
const keys = fc.constantFrom('a', 'b', 'events', 'é', 'ab', '__proto__', '9', '\ud83d\ude00', '\ue000');
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof({ depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('1', '-0', '1.50', '1e21', 'null', '"x"', '"\\u0061"'),
    hostile.map((s) => JSON.stringify(s)),
    fc.array(tie('json'), { maxLength: 3 }),
    fc.record({ members: fc.array(fc.tuple(keys, tie('json')), { maxLength: 3 }) })),
}));
/** The same values with every object's keys in canonical order (sorted by code unit, no index names, no repeats), as collectors send them. */
const ordered = (j: Json): Json => typeof j === 'string' ? j
  : Array.isArray(j) ? j.map(ordered)
  : { members: [...new Map(j.members.filter(([k]) => k !== '9').map(([k, v]) => [k, ordered(v)] as [string, Json])).entries()].sort(([a], [b]) => (a < b ? -1 : 1)) };
/** An event: a padded object in key order (the members around the array are not always). */
const element: fc.Arbitrary<Json> = fc.record({ pad: fc.nat({ max: 4000 }), v: json.map(ordered), s: hostile }).map(({ pad, v, s }) => ({ members: [['p', JSON.stringify('p'.repeat(1000 + pad))], ['s', JSON.stringify(s)], ['v', v]] }));
/** Where the large array stands: the document itself, inside objects (where it is cut), or inside an array (where it is not). */
const placement = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'top' as const }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('objects' as const), outer: fc.array(fc.tuple(keys, json), { maxLength: 3 }), inner: fc.array(fc.tuple(keys, json), { maxLength: 3 }), name: keys }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'in an array' as const }) },
);

const text = (j: Json, space: string): string => typeof j === 'string' ? j
  : Array.isArray(j) ? `[${j.map((x) => text(x, space)).join(`,${space}`)}]`
  : `{${j.members.map(([k, v]) => `${JSON.stringify(k)}:${space}${text(v, space)}`).join(',')}}`;

type Placement = typeof placement extends fc.Arbitrary<infer P> ? P : never;

function document(events: Json[], where: Placement, wraps: number): Json {
  let doc: Json;
  switch (where.kind) {
    case 'top': doc = events; break;
    case 'in an array': doc = { members: [['payload', [events]]] }; break;
    case 'objects': doc = { members: [...where.outer, ['payload', { members: [...where.inner, [where.name, events]] }]] };
  }
  // Deep wrappings reach the nesting bound from outside the array.
  for (let i = 0; i < wraps; i++) doc = { members: [['w', doc]] };
  return doc;
}

/** How the bytes are spoiled, if at all: a byte dropped, a quote or bracket added, cut short, garbage, a BOM, bad UTF-8. */
const damage = fc.oneof(
  { weight: 8, arbitrary: fc.constant('none') },
  fc.constantFrom('drop', 'quote', 'open', 'close', 'truncate', 'garbage', 'bom', 'bad utf-8', 'newline in string'),
);

function spoil(t: string, how: string, at: number): Uint8Array {
  const b = Buffer.from(t);
  const i = Math.floor(at * (b.length - 1));
  const insert = (x: Uint8Array) => Buffer.concat([b.subarray(0, i), x, b.subarray(i)]);
  switch (how) {
    case 'drop': return Buffer.concat([b.subarray(0, i), b.subarray(i + 1)]);
    case 'quote': return insert(Buffer.from('"'));
    case 'open': return insert(Buffer.from('['));
    case 'close': return insert(Buffer.from(']'));
    case 'truncate': return b.subarray(0, i);
    case 'garbage': return Buffer.concat([b, Buffer.from(' x')]);
    case 'bom': return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), b]);
    case 'bad utf-8': return insert(Buffer.from([0xc3, 0x28]));
    case 'newline in string': {
      const q = b.indexOf('"', i);
      return q === -1 ? b : Buffer.concat([b.subarray(0, q + 1), Buffer.from('\n'), b.subarray(q + 1)]);
    }
    default: return b;
  }
}

describe('strict JSON with its largest array in pieces (property)', () => {
  it('judges large envelopes exactly as parsing them whole does: value, key order, canonical form, or the same error', () => {
    let pieced = 0;
    fc.assert(fc.property(
      fc.array(element, { minLength: 30, maxLength: 60 }), placement, fc.constantFrom(0, 0, 0, 1, 62, 63), fc.boolean(),
      fc.constantFrom('', '', '', ' '), damage, fc.double({ min: 0, max: 1, noNaN: true }),
      (events, where, wraps, inOrder, space, how, at) => {
        const doc = document(events, where, wraps);
        const bytes = spoil(text(inOrder ? ordered(doc) : doc, space), how, at);
        const whole = parseStrictJsonWhole(bytes);
        const pieces = parseStrictJsonInPieces(bytes);
        if (pieces !== undefined) {
          pieced++;
          assert.deepStrictEqual(pieces, whole);
        }
        assert.deepStrictEqual(parseStrictJson(bytes), whole);
      }), { numRuns: 200, endOnFailure: true });
    // The property says nothing unless many envelopes really were cut.
    // About a fifth are (undamaged and large enough); 20 keeps the check meaningful without failing on a draw.
    assert.ok(pieced >= 20, `only ${pieced} of 200 envelopes were parsed in pieces`);
  });

  it('parses a collector envelope of 2,000 events in pieces, canonical as sealed', () => {
    const events = Array.from({ length: 2000 }, (_, i) => ({ id: `e-${i}`, message: i % 9 === 0 ? '},{id:forged},[ ]' : 'é', time: '2026-12-01T00:00:00.000Z' }));
    const envelope = { algorithm: 'Ed25519', payload: { collectedAt: '2026-12-01T00:00:00.000Z', collectorId: 'c', events, facts: [], schemaVersion: 1, sequence: 1 }, signature: 'A'.repeat(88) };
    const bytes = Buffer.from(canonicalize(envelope));
    assert.deepStrictEqual(parseStrictJsonInPieces(bytes), { ok: true, value: envelope, keysInOrder: true, canonical: true });
  });

  it('refuses a duplicate key inside the array and one beside it, as the whole parse does', () => {
    const events = Array.from({ length: 2000 }, (_, i) => `{"id":"e-${i}","pad":"${'x'.repeat(40)}"}`);
    const inside = [...events];
    inside[1500] = '{"id":"e","id":"e"}';
    for (const t of [`{"a":[${inside.join(',')}]}`, `{"a":[${events.join(',')}],"a":1}`]) {
      const r = parseStrictJson(Buffer.from(t));
      assert.equal(r.ok, false);
      assert.match((r as { error: string }).error, /duplicate key/);
    }
  });
});
