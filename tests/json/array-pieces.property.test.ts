import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseArrayInPieces } from '../../src/kernel/json/array-pieces.js';
import { parseJsonBytes } from '../../src/http/body.js';
import { HttpError } from '../../src/http/errors.js';

/** What the edge answered before bodies were parsed in pieces: the whole text decoded and parsed at once. */
function wholeParse(bytes: Uint8Array): { value: unknown } | { error: string; issues?: readonly string[] } {
  if (bytes.byteLength === 0) return { error: 'request body is empty; expected JSON' };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return { error: 'request body is not valid UTF-8' };
  }
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    return { error: 'malformed JSON', ...(at ? { issues: [`(body): syntax error at position ${at}`] } : {}) };
  }
}

function edgeParse(bytes: Uint8Array): { value: unknown } | { error: string; issues?: readonly string[] } {
  try {
    return { value: parseJsonBytes(bytes) };
  } catch (err) {
    if (!(err instanceof HttpError)) throw err;
    if (err.message.startsWith('JSON nested deeper')) throw new Error('no body here nests that deep');
    return { error: err.message, ...(err.issues ? { issues: err.issues } : {}) };
  }
}

/** Strings that look like the places a body is cut, and everything else a string may hold. */
const hostileString = fc.oneof(
  fc.constantFrom('},', '},{', '"},{"', '}, {', '\\"},{', '},]', '[},{', 'é},{ü', '😀},{'),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 12 }),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(hostileString, fc.constant('__proto__')), tie('value'), { maxKeys: 4 }),
  ),
}));
/** An array element: mostly objects (where cuts fall), some of any kind, padded so bodies pass the piece size. */
const element = fc.oneof(
  { weight: 4, arbitrary: fc.record({ pad: fc.nat(3000).map((n) => 'p'.repeat(n)), v: value, s: hostileString }) },
  { weight: 1, arbitrary: value },
);

/** How the text is spoiled, if at all: the whole parser decides whether it is JSON. */
const damage = fc.oneof(
  { weight: 6, arbitrary: fc.constant('none' as const) },
  fc.constantFrom('trailing comma' as const, 'garbage after' as const, 'bom' as const, 'truncated' as const, 'extra bracket' as const, 'bad utf-8' as const, 'double comma' as const),
);

function spoil(text: string, how: string, at: number): Uint8Array {
  const cut = Math.floor(at * text.length);
  switch (how) {
    case 'trailing comma': {
      const end = text.lastIndexOf(']');
      return Buffer.from(`${text.slice(0, end)},${text.slice(end)}`);
    }
    case 'garbage after': return Buffer.from(`${text} x`);
    case 'bom': return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]);
    case 'truncated': return Buffer.from(text.slice(0, cut));
    case 'extra bracket': return Buffer.from(`${text.slice(0, cut)}]${text.slice(cut)}`);
    case 'bad utf-8': return Buffer.concat([Buffer.from(text.slice(0, cut)), Buffer.from([0xc3, 0x28]), Buffer.from(text.slice(cut))]);
    case 'double comma': {
      const i = text.indexOf('},', cut);
      return Buffer.from(i === -1 ? text : `${text.slice(0, i + 2)},${text.slice(i + 2)}`);
    }
    default: return Buffer.from(text);
  }
}

describe('JSON arrays parsed in pieces (property)', () => {
  it('answers what parsing the whole text answers: the same elements, or the same error', () => {
    let pieced = 0;
    fc.assert(fc.property(fc.array(element, { minLength: 40, maxLength: 120 }), fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, fc.constantFrom(1, '\t')), damage, fc.double({ min: 0, max: 1, noNaN: true }), (elements, indent, how, at) => {
      const text = ` ${JSON.stringify(elements, null, indent)}\n`;
      const bytes = spoil(text, how, at);
      const buf = Buffer.from(bytes);
      if (parseArrayInPieces(buf, 0) !== undefined) pieced++;
      assert.deepStrictEqual(edgeParse(bytes), wholeParse(bytes));
    }), { numRuns: 150, endOnFailure: true });
    // The property says nothing unless most bodies really were cut.
    assert.ok(pieced >= 40, `only ${pieced} of 150 bodies were parsed in pieces`);
  });

  it('parses a batch of 3,000 events in pieces, the same as whole', () => {
    const events = Array.from({ length: 3000 }, (_, i) => ({ id: `e-${i}`, note: i % 7 === 0 ? '},{"id":"forged"},' : 'x', entityKeys: [`ip:10.0.${i >> 8}.${i & 255}`] }));
    const bytes = Buffer.from(JSON.stringify(events));
    const pieces = parseArrayInPieces(bytes, 0);
    assert.ok(pieces, 'a 3000-event body is cut');
    assert.deepStrictEqual(pieces, events);
  });

  it('refuses a trailing comma after the last cut, as the whole parser does', () => {
    // One cut, between the two objects; the rest after it ends in a trailing comma.
    const bytes = Buffer.from(`[{"p":"${'x'.repeat(70_000)}"},{"q":"${'x'.repeat(40_000)}"},]`);
    assert.equal(parseArrayInPieces(bytes, 0), undefined);
    assert.deepStrictEqual(edgeParse(bytes), wholeParse(bytes));
  });

  it('gives up on a body whose cut fails past four pieces\' size, before parsing much of it again', () => {
    // The first `},{` lies 200 KB into a string: that piece cannot parse, and is too large to try further.
    const events = [{ s: `${'a'.repeat(200_000)}},{` }, ...Array.from({ length: 3000 }, (_, i) => ({ id: `e-${i}` }))];
    const bytes = Buffer.from(JSON.stringify(events));
    assert.equal(parseArrayInPieces(bytes, 0), undefined);
    assert.deepStrictEqual(parseJsonBytes(bytes), events);
  });

  it('leaves small bodies, objects and arrays without objects to the whole parser', () => {
    assert.equal(parseArrayInPieces(Buffer.from('[{"a":1},{"a":2}]'), 0), undefined);
    assert.equal(parseArrayInPieces(Buffer.from(JSON.stringify({ records: Array.from({ length: 5000 }, (_, i) => ({ i })) })), 0), undefined);
    assert.equal(parseArrayInPieces(Buffer.from(JSON.stringify(Array.from({ length: 50_000 }, (_, i) => i))), 0), undefined);
  });
});
