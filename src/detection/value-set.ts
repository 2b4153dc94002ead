import { lowerOf, type StringTest } from './wildcard.js';
import { literalIndex } from './prefilter.js';

/**
 * Long lists of literal values (a supply-chain rule lists tens of thousands of hashes) are matched
 * in one pass instead of one test per value: equality through a set, `startswith`/`endswith` through
 * a set per distinct value length, `contains` through an Aho-Corasick automaton. Cost per event is
 * independent of the number of values (equality), of the number of distinct lengths (prefix,
 * suffix), or linear in the text (contains).
 */

/** Below this many literal values, the per-value tests are as fast and the set is not built. */
export const VALUE_SET_THRESHOLD = 16;

type Position = 'contains' | 'startswith' | 'endswith' | undefined;

function byLength(values: readonly string[]): Array<[number, Set<string>]> {
  const map = new Map<number, Set<string>>();
  for (const v of values) {
    const set = map.get(v.length) ?? new Set<string>();
    set.add(v);
    map.set(v.length, set);
  }
  return [...map.entries()].sort((a, b) => a[0] - b[0]);
}

/** Aho-Corasick over UTF-16 code units (the prefilter's literal index): whether any value occurs in the text. */
function automaton(values: readonly string[]): StringTest {
  const index = literalIndex(values);
  return (text) => index.any(text);
}

/** One test for a list of literal values (no wildcards) at a position, case-insensitive unless `cased`. */
export function literalSetTest(values: readonly string[], position: Position, cased: boolean): StringTest {
  const keys = cased ? values : values.map((v) => v.toLowerCase());
  const norm = cased ? (s: string) => s : lowerOf;
  if (position === undefined) {
    const set = new Set(keys);
    return (s) => set.has(norm(s));
  }
  if (position === 'contains') {
    const find = automaton(keys);
    return (s) => find(norm(s));
  }
  const lengths = byLength(keys);
  const start = position === 'startswith';
  return (s) => {
    const text = norm(s);
    for (const [length, set] of lengths) {
      if (length > text.length) return false;
      if (set.has(start ? text.slice(0, length) : text.slice(text.length - length))) return true;
    }
    return false;
  };
}
