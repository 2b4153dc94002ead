import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { literalSetTest, VALUE_SET_THRESHOLD } from '../../src/detection/value-set.js';
import { compileFieldTest } from '../../src/detection/field-test.js';
import { planModifiers, type FieldPlan } from '../../src/detection/modifiers.js';
import { makeEvent } from './make-event.js';

/** Value sets must answer exactly what one test per value answers. */
function naive(values: readonly string[], position: 'contains' | 'startswith' | 'endswith' | undefined, cased: boolean, s: string): boolean {
  const t = cased ? s : s.toLowerCase();
  return values.some((v0) => {
    const v = cased ? v0 : v0.toLowerCase();
    return position === 'contains' ? t.includes(v) : position === 'startswith' ? t.startsWith(v) : position === 'endswith' ? t.endsWith(v) : t === v;
  });
}

const word = fc.array(fc.constantFrom('a', 'b', 'A', 'é', 'É', 'ab', 'ba', '0'), { minLength: 0, maxLength: 5 }).map((p) => p.join(''));

describe('value sets (long lists of literal values)', () => {
  it('agree with one test per value, at every position, cased or not', () => {
    fc.assert(fc.property(
      fc.array(word, { minLength: 1, maxLength: 40 }), fc.constantFrom(undefined, 'contains', 'startswith', 'endswith'), fc.boolean(), fc.array(word, { maxLength: 10 }),
      (values, position, cased, texts) => {
        const test = literalSetTest(values, position, cased);
        for (const s of [...texts, ...values, ...values.map((v) => `x${v}y`)]) assert.equal(test(s), naive(values, position, cased, s), `${JSON.stringify({ values, position, cased, s })}`);
      },
    ), { numRuns: 500 });
  });

  it('are used by field tests with many values, mixed with wildcard values, under neq', () => {
    const hashes = Array.from({ length: 30_000 }, (_, i) => `SHA256=${i.toString(16).padStart(64, '0')}`);
    const plan = planModifiers(['contains']) as FieldPlan;
    const test = compileFieldTest(plan, [...hashes, 'evil*tool'], () => () => undefined);
    assert.equal(typeof test, 'function');
    const event = makeEvent({ adapter: 'x' });
    const holds = test as (v: unknown, e: typeof event) => boolean;
    assert.ok(holds(`MD5=1,${hashes[29_999]!.toLowerCase()},IMPHASH=2`, event));
    assert.ok(holds('an EVIL-ish tool', event), 'the wildcard value is still tried');
    assert.ok(!holds('SHA256=ff', event));
    const neq = compileFieldTest(planModifiers(['neq']) as FieldPlan, hashes.slice(0, VALUE_SET_THRESHOLD), () => () => undefined) as (v: unknown, e: typeof event) => boolean;
    assert.ok(!neq(hashes[3], event));
    assert.ok(neq('other', event));
    assert.ok(!neq(undefined, event), 'neq needs the field present');
  });
});
