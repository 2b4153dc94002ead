import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { literalIndex } from '../../src/detection/prefilter.js';

/** How many times each literal (by id) occurs in `text`, overlapping occurrences included. */
function occurrences(literals: readonly string[], text: string): number[] {
  return literals.map((lit) => {
    let n = 0;
    for (let end = Math.max(1, lit.length); end <= text.length; end++) if (text.slice(end - lit.length, end) === lit) n++;
    return n;
  });
}

/** A small alphabet, so literals share prefixes and suffixes: branching nodes and failure links of every kind. */
const word = (max: number) => fc.string({ unit: fc.constantFrom('a', 'b', 'c', '\u00e9'), maxLength: max });

describe('literalIndex (Aho-Corasick)', () => {
  it('reports each literal once per occurrence, as looking at every position does, and any() agrees', () => {
    fc.assert(
      fc.property(fc.array(word(6), { maxLength: 12 }), word(40), (literals, text) => {
        const index = literalIndex(literals);
        const counted = literals.map(() => 0);
        index.scan(text, (id) => {
          counted[id]!++;
        });
        const expected = occurrences(literals, text);
        assert.deepEqual(counted, expected);
        assert.equal(index.any(text), expected.some((n) => n > 0) || literals.includes(''));
      }),
      { numRuns: 1000 },
    );
  });

  it('finds values among 23,600 long ones, where most nodes have one child', () => {
    const values = Array.from({ length: 23_600 }, (_, i) => `evil-${i.toString(36)}-${(i * 7919).toString(16)}.example`);
    const index = literalIndex(values);
    const found: number[] = [];
    index.scan(`get /dl/${values[4321]}/x and ${values[17]}`, (id) => found.push(id));
    assert.deepEqual(found.sort((a, b) => a - b), [17, 4321]);
    assert.equal(index.any('/static/app.js'), false);
  });
});
