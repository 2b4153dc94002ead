import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { caseFolded, linearForm, unrolled } from '../../src/detection/linear-form.js';
import { translateRegex } from '../../src/detection/regex.js';

// Patterns as translateRegex writes them (no `u` flag): letters, digits, escapes, classes with
// ranges that span letters and other characters, groups (named, non-capturing, lookahead),
// alternation and quantifiers.
const letter = fc.constantFrom('a', 'B', 'k', 'z', 'Z', 'e', 'Q');
const classItem = fc.oneof(letter, fc.constantFrom('a-c', 'A-F', '0-z', 'X-b', '_-a', 'k-m', '\\d', '\\w', '\\-', '\\]', '^', '[', '0', ' '));
const cls = fc.tuple(fc.boolean(), fc.array(classItem, { minLength: 1, maxLength: 3 })).map(([neg, items]) => `[${neg ? '^' : ''}${items.join('')}]`);
const { pattern } = fc.letrec<{ pattern: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    letter, letter,
    fc.constantFrom('0', '9', '_', ' ', '-', '.', '\\d', '\\w', '\\s', '\\W', '\\.', '\\-', '\\e', '\\b', '[^\\n]', '^', '$'),
    cls,
    fc.tuple(fc.constantFrom('(', '(?:', '(?<Nm>', '(?<_k$>', '(?=', '(?!'), tie('pattern')).map(([open, inner]) => `${open}${inner})`),
  ),
  pattern: fc.array(fc.array(fc.tuple(tie('atom'), fc.constantFrom('', '', '*', '+', '?', '{1,2}')).map(([a, q]) => (/^[$^]$|^\\b$|^\(\?[=!]/.test(a) ? a : a + q)), { minLength: 1, maxLength: 4 }).map((s) => s.join('')), { minLength: 1, maxLength: 2 })
    .map((alts) => alts.join('|')),
}));
const text = fc.string({ unit: fc.constantFrom('a', 'A', 'b', 'B', 'k', 'K', 'z', 'Z', 'e', 'E', 'q', 'Q', 'Y', '`', '0', '9', '_', ' ', '-', '[', ']', '\n', '.', 'é', 'É', 'ı', 'K'), maxLength: 14 });

describe('case folding a pattern for the linear engine', () => {
  it('matches exactly what the pattern matches with the i flag (where it folds; it folds every such pattern here)', () => {
    fc.assert(fc.property(pattern, fc.array(text, { minLength: 1, maxLength: 6 }), (p, texts) => {
      let withI: RegExp;
      try { withI = new RegExp(p, 'i'); } catch { return; }
      const folded = caseFolded(p);
      assert.notEqual(folded, undefined, p);
      const without = new RegExp(folded!, '');
      assert.equal(without.flags, '');
      for (const s of texts) {
        const a = withI.exec(s);
        const b = without.exec(s);
        assert.deepEqual(b === null ? null : [b.index, ...b], a === null ? null : [a.index, ...a], `${p} -> ${folded} on ${JSON.stringify(s)}`);
      }
    }), { numRuns: 3000 });
  });

  it('leaves alone what it cannot fold exactly: non-ASCII, \\x \\u \\c escapes, back-references', () => {
    for (const p of ['é', 'a\\x41', '\\u0041', '\\cA', '(a)\\1', '(?<n>a)\\k<n>', '[\\x41-\\x5a]']) assert.equal(caseFolded(p), undefined, p);
  });

  it('folds every case-insensitive `re` of the SigmaHQ rules it can, so V8 can run them in linear time', () => {
    const invoke = translateRegex('(?i)(set).*&&\\s?set.*(environment|invoke|\\$?\\{?input).*&&.*"');
    assert.ok(invoke.ok && invoke.flags === 'i');
    const folded = new RegExp(caseFolded(invoke.source)!, '');
    assert.equal(folded.test('SET x && Set y ENVIRONMENT && z "'), true);
    assert.equal(folded.test('set&&set' + 'input&&'.repeat(4000)), false);
  });
});

// The `l` flag (run on the linear engine, or refuse to compile) exists behind this V8 flag.
setFlagsFromString('--enable-experimental-regexp-engine');

const counted = fc.oneof(
  fc.integer({ min: 0, max: 25 }).map((n) => `{${n}}`),
  fc.integer({ min: 0, max: 25 }).map((n) => `{${n},}`),
  fc.tuple(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 25 })).map(([a, b]) => `{${Math.min(a, b)},${Math.max(a, b)}}`),
).chain((q) => fc.constantFrom(q, `${q}?`));
// Groups hold a few plain atoms, repeated an exact number of times at most, and no alternation: a
// quantified group of overlapping choices (`(a|.)+`, `(a{0,5})*`) backtracks for minutes on the
// original pattern, which the test would wait for. Exact counts inside a counted group multiply.
const plain = fc.constantFrom('a', 'b', '.', '\\d', '\\w', '[ab]', '[^a]', '\\.', '-');
const unit = fc.oneof(
  plain, plain,
  fc.tuple(fc.constantFrom('(', '(?:', '(?<Nm>', '(?<_k$>'), fc.array(fc.tuple(plain, fc.constantFrom('', '', '{3}', '{6}')).map(([a, n]) => a + n), { minLength: 1, maxLength: 3 }))
    .map(([open, atoms]) => `${open}${atoms.join('')})`),
);
const sequence = fc.array(fc.oneof(
  fc.tuple(unit, fc.oneof(counted, fc.constantFrom('', '', '*', '+', '?'))).map(([u, q]) => u + q),
  fc.constantFrom('^', '$'),
), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
// Anchored at either end half the time, so that a repetition's bounds decide the match.
const anchored = fc.tuple(fc.constantFrom('', '^'), sequence, fc.constantFrom('', '$')).map(([a, q, b]) => a + q + b);
const repeated = fc.array(anchored, { minLength: 1, maxLength: 2 }).map((alts) => alts.join('|'));
// Runs of one character around each repetition's bounds, between short random texts.
const short = fc.string({ unit: fc.constantFrom('a', 'b', '1', '.', '-', ' '), maxLength: 4 });
const longText = fc.oneof(
  fc.string({ unit: fc.constantFrom('a', 'b', '1', '.', '-', ' '), maxLength: 40 }),
  fc.tuple(short, fc.constantFrom('a', 'b', '1', '.'), fc.integer({ min: 0, max: 30 }), short).map(([p, c, n, q]) => p + c.repeat(n) + q),
);

describe('unrolling counted repetitions for the linear engine', () => {
  it('tests every value as the pattern does, and leaves no repetition above 16', () => {
    fc.assert(fc.property(repeated, fc.array(longText, { minLength: 1, maxLength: 12 }), (p, texts) => {
      let original: RegExp;
      try { original = new RegExp(p); } catch { return; }
      const u = unrolled(p);
      assert.notEqual(u, undefined, p);
      const copy = new RegExp(u!);
      for (const s of texts) assert.equal(copy.test(s), original.test(s), `${p} -> ${u} on ${JSON.stringify(s)}`);
      if (!/[$^]/.test(p)) assert.doesNotThrow(() => new RegExp(u!, 'l'), `${u} on the linear engine`);
      for (const m of u!.matchAll(/\{(\d+)(?:,(\d*))?\}/g)) assert.ok(Number(m[1]) <= 16 && (m[2] === undefined || m[2] === '' || Number(m[2]) <= 16), u);
    }), { numRuns: 3000 });
  });

  it('leaves a pattern without a long repetition as it is, and refuses what it cannot copy exactly', () => {
    for (const p of ['a{2,16}', '(a)b*', '(?<n>x)+']) assert.equal(unrolled(p), p);
    for (const p of ['(a)\\1{20}', '(?<n>a)\\k<n>{20}', '\\x41{20}', '(?=a){20}', 'a{1,99999}']) assert.equal(unrolled(p), undefined, p);
    assert.equal(unrolled('[a-f0-9]{20}'), '[a-f0-9]'.repeat(20));
    assert.equal(unrolled('x{1,3}y{17}'), 'x{1,3}' + 'y'.repeat(17));
    for (const [p, yes, no] of [['^a{0,20}$', 'a'.repeat(20), 'a'.repeat(21)], ['^a{18,}$', 'a'.repeat(18), 'a'.repeat(17)], ['^(?:ab){17}$', 'ab'.repeat(17), 'ab'.repeat(16)]] as const) {
      const u = new RegExp(unrolled(p)!);
      assert.deepEqual([u.test(yes), u.test(no)], [true, false], p);
    }
  });

  it('writes the SigmaHQ re values the linear engine refused as written in a form it takes', () => {
    for (const [p, flags] of [
      ['HostId=[a-zA-Z0-9-]{36}\\s+EngineVersion=', ''], ['https?://(?:0[0-9]{1,11}\\.){3}0[0-9]{1,11}', ''], ['(.){200,}', ''], ['-k\\s\\w{1,64}(?:\\s?(?:-p|-s))?', ''],
      ['\\.exe[\\"\\\']?\\s+[^\\"]{0,64}werfaultsecure\\.exe[\\"\\\']?\\s+\\d{2,10}', 'i'],
      // A `$` that ends its group's alternative: written as consuming a final newline, not a lookahead.
      ['(^[a-zA-Z]{4}$)|(^[a-zA-Z]{8}$)|(^[a-zA-Z]{16}$)', ''],
    ] as const) {
      // As live detection compiles them (field-test.ts): translated from Python's syntax first.
      const js = translateRegex(p, flags);
      assert.ok(js.ok, p);
      const t = linearForm(js.source, js.flags);
      assert.doesNotThrow(() => new RegExp(t.source, `${t.flags}l`), p);
    }
  });
});
