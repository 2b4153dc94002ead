import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { firstOfKey, seenKeys } from '../../src/events/normalized-event.js';

describe('firstOfKey', () => {
  it('picks each key once, at its first place, by scanning or with the set (whichever the length asks for)', () => {
    fc.assert(fc.property(fc.array(fc.constantFrom('ip:a', 'ip:b', 'host:c', 'user:d', 'ip:e'), { maxLength: 40 }), (keys) => {
      const expected = keys.map((k, i) => keys.indexOf(k) === i);
      const seen = seenKeys(keys);
      assert.equal(seen !== undefined, keys.length > 16);
      assert.deepEqual(keys.map((_, i) => firstOfKey(keys, i, seen)), expected);
      const set = new Set<string>();
      assert.deepEqual(keys.map((_, i) => firstOfKey(keys, i, set)), expected, 'the set gives the same answer at any length');
    }), { numRuns: 500 });
  });
});
