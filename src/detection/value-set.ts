import { lowerOf, type StringTest } from './wildcard.js';

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

/** Aho-Corasick over UTF-16 code units: whether any value occurs in the text. */
function automaton(values: readonly string[]): StringTest {
  const next: Array<Map<number, number>> = [new Map()];
  const fail: number[] = [0];
  const terminal: boolean[] = [false];
  for (const v of values) {
    let node = 0;
    for (let i = 0; i < v.length; i++) {
      const c = v.charCodeAt(i);
      let child = next[node]!.get(c);
      if (child === undefined) {
        child = next.length;
        next.push(new Map());
        fail.push(0);
        terminal.push(false);
        next[node]!.set(c, child);
      }
      node = child;
    }
    terminal[node] = true;
  }
  const queue: number[] = [...next[0]!.values()];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const [c, child] of next[node]!) {
      let f = fail[node]!;
      while (f !== 0 && !next[f]!.has(c)) f = fail[f]!;
      const target = next[f]!.get(c);
      fail[child] = target !== undefined && target !== child ? target : 0;
      if (terminal[fail[child]!]) terminal[child] = true;
      queue.push(child);
    }
  }
  if (terminal[0]) return () => true;
  return (text) => {
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      while (node !== 0 && !next[node]!.has(c)) node = fail[node]!;
      node = next[node]!.get(c) ?? 0;
      if (terminal[node]) return true;
    }
    return false;
  };
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
