import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseDocument, stringify } from 'yaml';
import { nestingPastLimit, parseSigmaText, SIGMA_TEXT_LIMITS } from '../../src/detection/sigma-yaml.js';
import { sigmaSample } from './make-event.js';

function docsOf(text: string): unknown[] {
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  return parsed.docs;
}

function errorOf(text: string): string {
  const parsed = parseSigmaText(text);
  assert.ok(!parsed.ok, 'expected the text to be refused');
  return parsed.error;
}

describe('parseSigmaText', () => {
  it('reads every document of a multi-document file', () => {
    const docs = docsOf(sigmaSample('correlation-examples', 'constructed_linux_sshd_bruteforce_then_success.yml'));
    assert.equal(docs.length, 5);
    assert.deepEqual(docs.map((d) => (d as { name?: string }).name), [undefined, 'sshd_many_failed', 'sshd_failed_password', 'sshd_accepted', undefined]);
  });

  it('keeps YAML 1.2 core types: Z: 0 is a number, 8BB00EE and "false" are strings', () => {
    const [doc] = docsOf('a: 0\nb: 8BB00EE\nc: "false"\nd: 2022-01-26\n');
    assert.deepEqual(doc, { a: 0, b: '8BB00EE', c: 'false', d: '2022-01-26' });
  });

  it('skips empty documents', () => {
    assert.equal(docsOf('---\ntitle: a\n---\n---\ntitle: b\n').length, 2);
    assert.deepEqual(docsOf(''), []);
  });

  it('refuses YAML errors, duplicate keys and alias bombs', () => {
    assert.match(errorOf('title: [unclosed\n'), /^YAML document 1 \(line \d+\): /);
    assert.match(errorOf('title: a\n---\ntitle: b\ntitle: c\n'), /^YAML document 2 \(line 4\): Map keys must be unique/);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x]', 'b: &b [*a, *a, *a, *a, *a, *a, *a, *a]', 'c: &c [*b, *b, *b, *b, *b, *b, *b, *b]', 'd: [*c, *c, *c, *c, *c, *c, *c, *c]'].join('\n');
    assert.match(errorOf(bomb), /^YAML: .*alias/i);
    assert.match(errorOf('title: x\ndetection: &d\n  sel: [a]\n  loop: *d\n'), /^YAML document 1: an alias refers to its own anchor/);
    assert.equal(docsOf('a: &v [1, 2]\nb: *v\n').length, 1, 'a plain reuse of an anchor is fine');
  });

  it('refuses texts over the size and document limits', () => {
    assert.match(errorOf(`title: ${'x'.repeat(SIGMA_TEXT_LIMITS.bytes)}`), /larger than 1048576 bytes/);
    assert.match(errorOf('a: 1\n---\n'.repeat(SIGMA_TEXT_LIMITS.documents + 1)), /more than 1000 YAML documents/);
  });

  it('refuses text nested deeper than the limit before the YAML parser sees it, at its line', () => {
    // Each of these held the thread for about a second in the parser before it overflowed its stack.
    const deep = 200_000;
    const texts = [
      `title: x\ndetection:\n  sel:\n    a: ${'['.repeat(deep)}${']'.repeat(deep)}\n`,
      `title: x\ndetection:\n  sel:\n    a: ${'{a: '.repeat(deep / 4)}1${'}'.repeat(deep / 4)}\n`,
      `title: x\ndetection:\n  sel:\n    a:\n      ${'- '.repeat(deep)}x\n`,
      `title: x\ndetection:\n${Array.from({ length: 1000 }, (_, i) => `${' '.repeat(2 + i)}k${i}:`).join('\n')} v\n`,
    ];
    for (const text of texts) {
      assert.match(errorOf(text), /^YAML \(line \d+\): nested deeper than 64 levels$/);
    }
    assert.match(errorOf(texts[2]!), /line 5\b/);
  });

  it('counts nesting no lower than it is, and at most twice as high, in every style, and accepts what is within the limit', () => {
    const nested = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'medium', withCrossShrink: true }, fc.constantFrom('x', 1, null, '', 'a: b', '- c', 'multi\nline\n'), tie('list'), tie('map')),
      list: fc.array(tie('value'), { maxLength: 3 }),
      map: fc.dictionary(fc.constantFrom('k', 'sel', 'a b', '? q', '- d', 'long key '.repeat(12)), tie('value'), { maxKeys: 3 }),
    })).value;
    const depth = (v: unknown): number => (typeof v === 'object' && v !== null ? 1 + Math.max(0, ...Object.values(v).map(depth)) : 0);
    const style = fc.record({ collectionStyle: fc.constantFrom('block', 'flow', 'any') as fc.Arbitrary<'block' | 'flow' | 'any'>, indent: fc.integer({ min: 1, max: 6 }), indentSeq: fc.boolean() });
    fc.assert(fc.property(nested, style, (value, options) => {
      const text = stringify({ detection: value }, options);
      const d = depth({ detection: value });
      assert.notEqual(nestingPastLimit(text, d - 1), undefined, `counted below ${d}:\n${text}`);
      if (d >= 5) assert.equal(nestingPastLimit(text, 2 * d), undefined, `counted above ${2 * d}:\n${text}`);
      // (yaml's own writer sometimes writes what it cannot read back: an empty `[]` under `indentSeq: false`.)
      if (d < SIGMA_TEXT_LIMITS.nesting / 4 && parseDocument(text).errors.length === 0) assert.ok(parseSigmaText(text).ok, text);
    }), { numRuns: 1000 });
  });

  it('applies rule collections: global, repeat and reset', () => {
    const text = [
      'action: global', 'title: Shared', 'logsource: {product: linux}', 'detection: {condition: sel}', '---',
      'detection: {sel: [one]}', '---',
      'action: repeat', 'detection: {sel: [two]}', '---',
      'action: reset', '---',
      'title: Alone', 'detection: {sel: [three], condition: sel}',
    ].join('\n');
    assert.deepEqual(docsOf(text), [
      { title: 'Shared', logsource: { product: 'linux' }, detection: { condition: 'sel', sel: ['one'] } },
      { title: 'Shared', logsource: { product: 'linux' }, detection: { condition: 'sel', sel: ['two'] } },
      { title: 'Alone', detection: { sel: ['three'], condition: 'sel' } },
    ]);
  });

  it('refuses unknown collection actions and a repeat with nothing before it', () => {
    assert.match(errorOf('action: include\nfilename: x.yml\n'), /unknown collection action 'include'/);
    assert.match(errorOf('action: repeat\ntitle: x\n'), /'action: repeat' has no previous rule/);
  });

  it('never throws on arbitrary text', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), (text) => {
      parseSigmaText(text);
    }), { numRuns: 1000 });
    assert.equal(parseSigmaText(`${'['.repeat(20000)}`).ok, false);
  });
});
