import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { bindCondition, parseCondition, parseConditionValue, type ConditionNode } from '../../src/detection/condition.js';
import { compileSigma, type CompiledRule } from '../../src/detection/compile.js';
import { ruleDoc } from './rule-helpers.js';
import { zeek } from './make-event.js';

type Truth = Record<string, boolean>;

function evaluate(condition: string, identifiers: string[], truth: Truth): boolean {
  const parsed = parseConditionValue(condition);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  const bound = bindCondition<Truth>(parsed.value, identifiers, (name) => (t) => t[name] === true);
  assert.ok(bound.ok, bound.ok ? '' : bound.error);
  return bound.value(truth);
}

function bindError(condition: unknown, identifiers: string[]): string {
  const parsed = parseConditionValue(condition);
  if (!parsed.ok) return parsed.error;
  const bound = bindCondition<Truth>(parsed.value, identifiers, () => () => true);
  assert.ok(!bound.ok, `expected ${JSON.stringify(condition)} to be refused`);
  return bound.error;
}

const bits = (n: number, names: string[]): Truth => Object.fromEntries(names.map((name, i) => [name, ((n >> i) & 1) === 1]));

describe('condition grammar', () => {
  it('binds "a or b and not c" as a or (b and (not c))', () => {
    const parsed = parseCondition('a or b and not c');
    assert.ok(parsed.ok);
    const expected: ConditionNode = { kind: 'or', operands: [{ kind: 'id', name: 'a' }, { kind: 'and', operands: [{ kind: 'id', name: 'b' }, { kind: 'not', operand: { kind: 'id', name: 'c' } }] }] };
    assert.deepEqual(parsed.value, expected);
    for (let n = 0; n < 8; n++) {
      const t = bits(n, ['a', 'b', 'c']);
      assert.equal(evaluate('a or b and not c', ['a', 'b', 'c'], t), t['a'] || (t['b'] && !t['c']));
    }
  });

  it('lets parentheses override precedence', () => {
    for (let n = 0; n < 8; n++) {
      const t = bits(n, ['a', 'b', 'c']);
      assert.equal(evaluate('(a or b) and not c', ['a', 'b', 'c'], t), (t['a'] || t['b']) && !t['c']);
      assert.equal(evaluate('not (a and b) or c', ['a', 'b', 'c'], t), !(t['a'] && t['b']) || t['c']);
    }
  });

  it('reads operators case-insensitively', () => {
    assert.equal(evaluate('a AND NOT b', ['a', 'b'], { a: true, b: false }), true);
  });

  it('expands "1 of sel*" and "all of sel*" over matching identifiers only', () => {
    const ids = ['sel_a', 'sel_b', 'filter'];
    assert.equal(evaluate('1 of sel*', ids, { sel_b: true }), true);
    assert.equal(evaluate('1 of sel*', ids, { filter: true }), false);
    assert.equal(evaluate('all of sel*', ids, { sel_a: true, sel_b: true }), true);
    assert.equal(evaluate('all of sel*', ids, { sel_a: true, filter: true }), false);
    assert.equal(evaluate('1 of sel_* and not 1 of filter*', ids, { sel_a: true, filter: true }), false);
  });

  it('leaves identifiers starting with _ out of "them"', () => {
    const ids = ['a', 'b', '_x'];
    assert.equal(evaluate('all of them', ids, { a: true, b: true }), true);
    assert.equal(evaluate('all of them', ids, { a: true }), false);
    assert.equal(evaluate('1 of them', ids, { _x: true }), false);
    assert.equal(evaluate('1 of _*', ids, { _x: true }), true);
  });

  it('treats a list of conditions as their OR', () => {
    assert.equal(evaluate(['a', 'b'] as unknown as string, ['a', 'b'], { b: true }), true);
    assert.equal(evaluate(['a', 'b'] as unknown as string, ['a', 'b'], {}), false);
  });

  it('refuses malformed conditions with a reason', () => {
    assert.match(bindError('(a or b', ['a', 'b']), /missing '\)'/);
    assert.match(bindError('a or b)', ['a', 'b']), /unexpected '\)'/);
    assert.match(bindError('a and', ['a']), /unexpected end of condition/);
    assert.match(bindError('a b', ['a', 'b']), /unexpected 'b'/);
    assert.match(bindError('a or nope', ['a']), /unknown search identifier 'nope'/);
    assert.match(bindError('1 of filter*', ['a']), /'filter\*' matches no search identifier/);
    assert.match(bindError('1 of', ['a']), /needs a search identifier pattern/);
    assert.match(bindError('', ['a']), /empty condition/);
    assert.match(bindError([], ['a']), /a string or a list of strings/);
    assert.match(bindError('sel | count() > 5', ['sel']), /aggregation expressions .* not supported/);
    assert.match(bindError(`${'('.repeat(500)}a${')'.repeat(500)}`, ['a']), /nested more than 64 levels/);
    assert.match(bindError(`${'not '.repeat(500)}a`, ['a']), /nested more than 64 levels/);
  });

  it('never throws on arbitrary text', () => {
    const token = fc.constantFrom('a', 'b', 'sel*', 'and', 'or', 'not', '(', ')', '1', 'all', 'of', 'them', '|', ' ');
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 200 }), fc.array(token, { maxLength: 60 }).map((t) => t.join(' '))), (text) => {
      const parsed = parseCondition(text);
      if (parsed.ok) bindCondition<Truth>(parsed.value, ['a', 'b', 'sel1'], () => () => true);
    }), { numRuns: 2000 });
  });
});

describe('conditions in compiled rules', () => {
  function rule(condition: string, selections: Record<string, unknown>): CompiledRule {
    const compiled = compileSigma(ruleDoc(selections, condition));
    assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
    return compiled.rule as CompiledRule;
  }

  it('reports the selections that held and honours the negated filter', () => {
    const r = rule('1 of sel_* and not filter', { sel_one: { f: 'one' }, sel_two: { g: 'two' }, filter: { h: 'skip' } });
    assert.deepEqual(r.match(zeek('test', { f: 'one', g: 'two' }))?.selections, ['sel_one', 'sel_two']);
    assert.deepEqual(r.match(zeek('test', { g: 'two' }))?.selections, ['sel_two']);
    assert.equal(r.match(zeek('test', { f: 'one', h: 'skip' })), undefined);
  });

  it('treats "all of them" as every identifier except those starting with _', () => {
    const r = rule('all of them', { sel_one: { f: 'one' }, sel_two: { g: 'two' }, _helper: { h: 'x' } });
    assert.ok(r.match(zeek('test', { f: 'one', g: 'two' })));
    assert.equal(r.match(zeek('test', { f: 'one', h: 'x' })), undefined);
  });
});
