import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { canonicalJson, canonicalize } from '../../src/kernel/canonical-json.js';

describe('canonicalJson', () => {
  it('gives one text for any key order, flat or nested, equal to a sorted recursive rendering', () => {
    const reference = (v: unknown): string => v === null || typeof v !== 'object' ? (JSON.stringify(v) ?? 'null')
      : Array.isArray(v) ? `[${v.map(reference).join(',')}]`
      : `{${Object.keys(v).filter((k) => (v as Record<string, unknown>)[k] !== undefined).sort().map((k) => `${JSON.stringify(k)}:${reference((v as Record<string, unknown>)[k])}`).join(',')}}`;
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      assert.equal(canonicalJson(v), reference(v));
    }));
    assert.equal(canonicalJson({ b: 1, a: [1, 'x'], c: { z: 1, y: 2 } }), '{"a":[1,"x"],"b":1,"c":{"y":2,"z":1}}');
  });

  it('writes every JSON value exactly as the strict RFC 8785 form used for signatures', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      assert.equal(canonicalJson(v), canonicalize(v));
    }));
    assert.equal(canonicalJson({ 10: 'a', 9: 'b', x: undefined }), canonicalize({ 10: 'a', 9: 'b' }));
    // A `__proto__` key out of order is still written (it was dropped from signed bytes before).
    const proto = JSON.parse('{"__proto__":false,"":false}') as unknown;
    assert.equal(canonicalize(proto), '{"":false,"__proto__":false}');
    assert.equal(canonicalJson(proto), canonicalize(proto));
  });
});
