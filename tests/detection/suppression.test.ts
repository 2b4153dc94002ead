import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileSigma } from '../../src/detection/compile.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { readSuppression } from '../../src/detection/suppression.js';

const compile = (text: string) => {
  const parsed = parseSigmaText(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return compileSigma(parsed.docs[0]);
};
const detection = (suppress: string) =>
  `title: T\nid: r1\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query: x}, condition: s}\nsuppress: ${suppress}\n`;
const correlation = (suppress: string) =>
  `title: C\nid: c1\ncorrelation: {type: event_count, rules: [r1], group-by: [src, user], timespan: 5m, condition: {gte: 2}}\n` +
  `suppress: ${suppress}\n`;

describe('a rule document\'s suppress key', () => {
  it('compiles into the rule: fields, window as written and in milliseconds', () => {
    const r = compile(detection('{by: [user, src], for: 30m}'));
    assert.ok(r.ok);
    assert.deepEqual(r.rule.suppress, { by: ['user', 'src'], for: '30m', forMs: 1_800_000 });
    const single = compile(detection('{by: user, for: 7d}'));
    assert.ok(single.ok);
    assert.deepEqual(single.rule.suppress, { by: ['user'], for: '7d', forMs: 604_800_000 });
  });

  it('is absent from a rule without one', () => {
    const r = compile(detection('{by: [user], for: 1h}').replace(/suppress:.*\n/, ''));
    assert.ok(r.ok);
    assert.equal(r.rule.suppress, undefined);
  });

  for (const [suppress, message] of [
    ['30m', /suppress: expected a map with by/],
    ['{by: [user]}', /suppress\.for: expected a timespan of 1s to 30d/],
    ['{by: [user], for: 31d}', /suppress\.for/],
    ['{by: [user], for: 0s}', /suppress\.for/],
    ['{by: [user], for: 1 hour}', /suppress\.for/],
    ['{by: [user], for: 1H}', /suppress\.for/],
    ['{for: 1h}', /suppress\.by: expected 1 to 8 field names/],
    ['{by: [], for: 1h}', /suppress\.by: expected 1 to 8 field names/],
    ['{by: [a, b, c, d, e, f, g, h, i], for: 1h}', /suppress\.by: expected 1 to 8/],
    ['{by: [user, user], for: 1h}', /'user' is named twice/],
    ['{by: [1], for: 1h}', /suppress\.by: expected field names/],
    ['{by: [""], for: 1h}', /suppress\.by: expected field names/],
    ['{by: [user], for: 1h, until: tomorrow}', /unknown key 'until'/],
  ] as const) {
    it(`refuses ${suppress}, naming the rule`, () => {
      const r = compile(detection(suppress));
      assert.ok(!r.ok);
      assert.match(r.error, /^rule "T": /);
      assert.match(r.error, message);
    });
  }

  it('on a correlation, takes only its group-by fields', () => {
    const r = compile(correlation('{by: [user], for: 1h}'));
    assert.ok(r.ok);
    assert.deepEqual(r.rule.suppress, { by: ['user'], for: '1h', forMs: 3_600_000 });
    const outside = compile(correlation('{by: [user, host], for: 1h}'));
    assert.ok(!outside.ok);
    assert.match(outside.error, /suppress\.by: 'host' not among the correlation's group-by fields \(src, user\)/);
  });

  it('never throws on arbitrary input, and what it accepts is within its bounds', () => {
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ by: fc.anything(), for: fc.anything() }), fc.record({ by: fc.array(fc.string()), for: fc.stringMatching(/^\d{1,4}[smhdx]$/) })), (raw) => {
        const r = readSuppression(raw);
        if (!r.ok) return;
        assert.ok(r.value.by.length >= 1 && r.value.by.length <= 8);
        assert.ok(r.value.forMs >= 1000 && r.value.forMs <= 30 * 86_400_000);
        assert.equal(new Set(r.value.by).size, r.value.by.length);
      }),
      { numRuns: 500 },
    );
  });
});
