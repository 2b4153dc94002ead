import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { translateRegex } from '../../src/detection/regex.js';

/**
 * Sigma's `re` values are Python/PCRE regular expressions. The translation to JavaScript is checked
 * against Python's own `re` (the engine pySigma's rule authors test with, /usr/bin/python3 from
 * tests/system-packages.mjs): on generated patterns and texts, `re.search` and the translated
 * JavaScript pattern must agree on every text.
 */

const PYTHON = '/usr/bin/python3';
const ORACLE = `
import json, re, sys
cases = json.load(sys.stdin)
print(json.dumps([[bool(re.search(p, s)) for s in texts] for p, texts in cases]))
`;

/** Python's verdicts for each pattern over its texts, in one interpreter run. */
function python(cases: Array<[string, string[]]>): boolean[][] {
  const r = spawnSync(PYTHON, ['-c', ORACLE], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as boolean[][];
}

function javascript(pattern: string, texts: string[]): boolean[] {
  const t = translateRegex(pattern);
  assert.ok(t.ok, `${pattern}: ${t.ok ? '' : t.error}`);
  const re = new RegExp(t.source, t.flags);
  return texts.map((s) => re.test(s));
}

const char = fc.constantFrom('a', 'b', 'A', 'B', ' ', '-', '1');
const text = fc.array(fc.constantFrom('a', 'b', 'A', 'B', '\n', ' ', '-', '1', '\r'), { maxLength: 8 }).map((cs) => cs.join(''));
const quantifier = fc.constantFrom('', '', '*', '+', '?', '{1,2}', '*?', '+?');
const anchor = fc.constantFrom('^', '$', '\\A', '\\Z', '\\b');
const { regex } = fc.letrec<{ regex: string; branch: string; piece: string; atom: string }>((tie) => ({
  atom: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    char,
    fc.constantFrom('.', '[ab]', '[^a]', '[A-B]', '[]a]', '[^]b]', '[)|]', '\\s', '\\S', '\\d', '\\w', '\\.', '\\-'),
    tie('regex').map((r) => `(?:${r})`),
    tie('regex').map((r) => `(${r})`),
  ),
  piece: fc.oneof(fc.tuple(tie('atom'), quantifier).map(([a, q]) => a + q), anchor),
  branch: fc.array(tie('piece'), { minLength: 1, maxLength: 4 }).map((ps) => ps.join('')),
  regex: fc.array(tie('branch'), { minLength: 1, maxLength: 3 }).map((bs) => bs.join('|')),
}));
const flags = fc.constantFrom('', '', '(?i)', '(?s)', '(?m)', '(?is)', '(?im)', '(?ms)');
const pattern = fc.tuple(flags, regex).map(([f, r]) => f + r);

describe('Sigma regular expressions in JavaScript agree with Python re', () => {
  it('on generated patterns and texts (both engines run every case)', { timeout: 300_000 }, () => {
    const cases = fc.sample(fc.tuple(pattern, fc.array(text, { minLength: 12, maxLength: 12 })), { numRuns: 400, seed: 20 });
    const verdicts = python(cases);
    const disagreements = cases.flatMap(([p, texts], i) => {
      const js = javascript(p, texts);
      return texts.flatMap((s, j) => (js[j] === verdicts[i]![j] ? [] : [`${JSON.stringify(p)} on ${JSON.stringify(s)}: python ${verdicts[i]![j]}, javascript ${js[j]}`]));
    });
    assert.deepEqual(disagreements.slice(0, 20), []);
  });

  it('and keep agreeing under shrinking (one interpreter per case)', { timeout: 300_000 }, () => {
    fc.assert(fc.property(pattern, fc.array(text, { minLength: 6, maxLength: 6 }), (p, texts) => {
      assert.deepEqual(javascript(p, texts), python([[p, texts]])[0]);
    // A fixed seed, as above: generated nested quantifiers can make either engine backtrack for very
    // long on an unlucky draw, and a synchronous engine cannot be interrupted by the test's timeout.
    }), { numRuns: 60, seed: 21 });
  });

  it('translates the Python-only forms SigmaHQ rules use', () => {
    const cases: Array<[string, string[]]> = [
      ['(?i)\\$\\{`?e`?n`?v`?:`?p`?a`?t`?h`?\\}', ['${ENV:PATH}', '${e`nv:path}', '$env:path']],
      ['(?P<q>["\'])x(?P=q)', ['"x"', "'x'", `"x'`]],
      ['\\Aab\\Z', ['ab', 'ab\n', 'xab']],
      ['ab$', ['ab', 'ab\n', 'ab\n\n']],
      ['a.b(?#comment)', ['axb', 'a\nb', 'a\rb']],
      ['(^[a-zA-Z]{4}$)|(^[a-zA-Z]{8}$)', ['abcd', 'abcd\n', 'abcdefgh\n', 'abcde', 'abcd\n\n']],
      ['(a$|b)c', ['ac', 'bc', 'a\nc', 'a']],
      ['((a$)|b)', ['a', 'a\n', 'xb', 'ax']],
      ['(a$)+', ['a', 'a\n', 'aa\n', 'ab']],
      ['(?:a$){1}x?', ['a', 'a\n', 'ax']],
      ['(?=a$)a', ['a', 'a\n', 'ab']],
      ['a(?<=a$)', ['a', 'a\n', 'ab']],
      ['[]a]x', [']x', 'ax', 'x', '[]x']],
      ['[^]a]x', [']x', 'bx', 'x']],
      ['[[]a', ['[a', 'a', ']a']],
      ['(a[)|]$)', ['a)', 'a|', 'a)\n', 'a]']],
      ['(a$|[)|])\\s', ['a\n', 'a', ')\n', '|x']],
    ];
    const verdicts = python(cases);
    cases.forEach(([p, texts], i) => assert.deepEqual(javascript(p, texts), verdicts[i], p));
  });

  it('refuses, with the reason, what JavaScript cannot express', () => {
    for (const [p, reason] of [['a(?i)b', /only at the start/], ['(?i:a)b', /only at the start/], ['(?>ab)', /atomic/], ['a++', /possessive/], ['(?x)a b', /inline flag 'x'/], ['(?(1)a|b)', /conditional/]] as const) {
      const t = translateRegex(p);
      assert.ok(!t.ok && reason.test(t.error), `${p}: ${t.ok ? 'accepted' : t.error}`);
    }
  });
});
