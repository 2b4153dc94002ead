import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { caseFolded } from '../../src/detection/case-fold.js';
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
    fc.tuple(fc.constantFrom('(', '(?:', '(?<Nm>', '(?=', '(?!'), tie('pattern')).map(([open, inner]) => `${open}${inner})`),
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
