import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { MAX_JSON_DEPTH, withinDepth } from '../../src/kernel/json/depth.js';
import { parseJsonBytes, parseJsonLines } from '../../src/http/body.js';
import { HttpError } from '../../src/http/errors.js';

/** The nesting of a value, the outermost container being level 1 (recursive: only for the shallow values generated here). */
function depthOf(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let deepest = 0;
  for (const child of Object.values(value)) deepest = Math.max(deepest, depthOf(child));
  return deepest + 1;
}

/** `leaf` wrapped `depth` times in arrays and objects, taking turns. */
function nest(leaf: unknown, depth: number): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = i % 2 === 0 ? [v] : { a: v };
  return v;
}

/** `[{"a":[…"x"…]}]` nested `depth` containers deep, as text. */
function deepText(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 === 0 ? '[' : '{"a":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}"x"${close}`;
}

const bytes = (text: string) => new TextEncoder().encode(text);

describe('the nesting bound on parsed JSON', () => {
  it('holds a value within `max` levels exactly when it nests at most `max` deep (property)', () => {
    // Values as the parser makes them (so a `__proto__` key is an own property), nested further at random.
    const value = fc.tuple(fc.jsonValue({ maxDepth: 4 }), fc.nat(12)).map(([v, d]) => JSON.parse(JSON.stringify(nest(v, d))) as unknown);
    fc.assert(fc.property(value, fc.integer({ min: 1, max: 20 }), (v, max) => {
      assert.equal(withinDepth(v, max), depthOf(v) <= max);
    }), { numRuns: 3000 });
  });

  it('refuses a body past 64 levels with a 400 naming the path, and takes one of exactly 64', () => {
    assert.deepEqual(parseJsonBytes(bytes(deepText(MAX_JSON_DEPTH))), JSON.parse(deepText(MAX_JSON_DEPTH)));
    for (const depth of [MAX_JSON_DEPTH + 1, 100_000]) {
      assert.throws(() => parseJsonBytes(bytes(deepText(depth))), (err: unknown) => {
        assert.ok(err instanceof HttpError && err.status === 400);
        assert.equal(err.message, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`);
        assert.match(err.issues![0]!, /^\[0\]\.a\[0\]\.a.*: nesting deeper than 64 levels$/);
        return true;
      });
    }
  });

  it('refuses a JSON line past 63 levels (one under the batch), naming the line', () => {
    const ok = JSON.stringify({ n: 1 });
    const lines = [ok, `{"a":${deepText(MAX_JSON_DEPTH - 2)}}`, ok, `{"a":${deepText(MAX_JSON_DEPTH - 1)}}`].join('\n');
    assert.throws(() => parseJsonLines(bytes(lines)), (err: unknown) => {
      assert.ok(err instanceof HttpError && err.status === 400);
      assert.equal(err.message, `JSON nested deeper than ${MAX_JSON_DEPTH - 1} levels in a line`);
      assert.deepEqual(err.issues!.map((i) => i.split(':')[0]), ['line 4']);
      return true;
    });
    assert.equal(parseJsonLines(bytes(lines.split('\n').slice(0, 3).join('\n'))).length, 3);
  });
});
