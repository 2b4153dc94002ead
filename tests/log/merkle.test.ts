import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  EMPTY_ROOT, appendLeaf, consistencyPath, frontierRoot, inclusionPath, leafHash, nodeHash, rootAt,
  verifyConsistency, verifyInclusion, type Frontier, type NodeSource,
} from '../../src/log/merkle.js';

// The naive definitions of RFC 9162 2.1.1, 2.1.3.1 and 2.1.4.1, written from the text, over whole arrays.
const sha = (...parts: Uint8Array[]) => new Uint8Array(parts.reduce((h, p) => h.update(p), createHash('sha256')).digest());
const k = (n: number) => 2 ** Math.ceil(Math.log2(n) - 1);
// Memoized by (array, range) only so the test stays fast; the recursion is the RFC's.
const memo = new WeakMap<Uint8Array[], Map<string, Uint8Array>>();
function mth(d: Uint8Array[], lo = 0, hi = d.length): Uint8Array {
  let cache = memo.get(d);
  if (!cache) memo.set(d, cache = new Map());
  const hit = cache.get(`${lo}:${hi}`);
  if (hit) return hit;
  const n = hi - lo;
  const s = n > 1 ? k(n) : 0;
  const out = n === 0 ? sha() : n === 1 ? sha(Uint8Array.of(0), d[lo]!) : sha(Uint8Array.of(1), mth(d, lo, lo + s), mth(d, lo + s, hi));
  cache.set(`${lo}:${hi}`, out);
  return out;
}
function path(m: number, d: Uint8Array[], lo = 0, hi = d.length): Uint8Array[] {
  const n = hi - lo;
  if (n <= 1) return [];
  const s = k(n);
  return m < s ? [...path(m, d, lo, lo + s), mth(d, lo + s, hi)] : [...path(m - s, d, lo + s, hi), mth(d, lo, lo + s)];
}
function subproof(m: number, d: Uint8Array[], b: boolean, lo = 0, hi = d.length): Uint8Array[] {
  const n = hi - lo;
  if (m === n) return b ? [] : [mth(d, lo, hi)];
  const s = k(n);
  return m <= s ? [...subproof(m, d, b, lo, lo + s), mth(d, lo + s, hi)] : [...subproof(m - s, d, false, lo + s, hi), mth(d, lo, lo + s)];
}

const entries = (n: number) => Array.from({ length: n }, (_, i) => new TextEncoder().encode(`entry ${i}`));

/** A node source over an in-memory frontier's stored nodes, the way the LMDB tree keeps them. */
function stored(d: Uint8Array[]): NodeSource {
  const nodes = new Map<string, Uint8Array>();
  const f: Frontier = { size: 0, roots: [] };
  for (const e of d) for (const [level, index, hash] of appendLeaf(f, leafHash(e))) nodes.set(`${level}/${index}`, hash);
  return (level, index) => (level === 0 ? leafHash(d[index]!) : nodes.get(`${level}/${index}`)!);
}

const hex = (a: readonly Uint8Array[]) => a.map((x) => Buffer.from(x).toString('hex'));

describe('Merkle tree (RFC 9162 2.1)', () => {
  it('hashes the empty tree, a leaf and a node as the RFC defines them', () => {
    assert.equal(Buffer.from(EMPTY_ROOT).toString('hex'), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    assert.equal(Buffer.from(leafHash(new Uint8Array(0))).toString('hex'), '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d');
    const a = leafHash(Uint8Array.of(1));
    const b = leafHash(Uint8Array.of(2));
    assert.deepEqual(nodeHash(a, b), sha(Uint8Array.of(1), a, b));
    assert.notDeepEqual(nodeHash(a, b), nodeHash(b, a));
  });

  it('gives the proofs of the RFC 9162 2.1.5 example tree of seven leaves', () => {
    const d = entries(7);
    const L = d.map((e) => leafHash(e));
    const [a, b, c, dd, e, f, j] = L as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    const g = nodeHash(a, b); const h = nodeHash(c, dd); const i = nodeHash(e, f);
    const kk = nodeHash(g, h); const l = nodeHash(i, j);
    const src = stored(d);
    assert.deepEqual(rootAt(src, 7), nodeHash(kk, l));
    assert.deepEqual(hex(inclusionPath(src, 0, 7)), hex([b, h, l]));
    assert.deepEqual(hex(inclusionPath(src, 3, 7)), hex([c, g, l]));
    assert.deepEqual(hex(inclusionPath(src, 4, 7)), hex([f, j, kk]));
    assert.deepEqual(hex(inclusionPath(src, 6, 7)), hex([i, kk]));
    assert.deepEqual(hex(consistencyPath(src, 3, 7)), hex([c, dd, g, l]));
    assert.deepEqual(hex(consistencyPath(src, 4, 7)), hex([l]));
    assert.deepEqual(hex(consistencyPath(src, 6, 7)), hex([i, j, kk]));
  });

  it('matches a naive recomputation of roots and proofs for every size from 1 to 1,000', () => {
    const d = entries(1000);
    const src = stored(d);
    const f: Frontier = { size: 0, roots: [] };
    for (let n = 1; n <= 1000; n++) {
      appendLeaf(f, leafHash(d[n - 1]!));
      const root = mth(d, 0, n);
      assert.deepEqual(rootAt(src, n), root, `root of ${n}`);
      assert.deepEqual(frontierRoot(f), root, `frontier root of ${n}`);
      for (const m of new Set([0, n - 1, (n * 7919) % n, n >> 1])) {
        const p = inclusionPath(src, m, n);
        assert.deepEqual(hex(p), hex(path(m, d, 0, n)), `path ${m} of ${n}`);
        assert.ok(verifyInclusion(m, n, leafHash(d[m]!), p, root), `verifies path ${m} of ${n}`);
      }
      for (const m of new Set([1, n - 1, n >> 1, (n * 104729) % n || 1])) {
        if (m > n || m < 1) continue;
        const p = consistencyPath(src, m, n);
        assert.deepEqual(hex(p), hex(subproof(m, d, true, 0, n)), `proof ${m}..${n}`);
        assert.ok(verifyConsistency(m, n, mth(d, 0, m), root, p), `verifies proof ${m}..${n}`);
      }
    }
  });

  it('rejects a proof of another leaf, another size or another root', () => {
    fc.assert(fc.property(fc.integer({ min: 2, max: 300 }), fc.nat(), fc.nat(), (n, x, y) => {
      const d = entries(n);
      const src = stored(d);
      const m = x % n;
      const root = rootAt(src, n);
      const p = inclusionPath(src, m, n);
      assert.ok(verifyInclusion(m, n, leafHash(d[m]!), p, root));
      assert.ok(!verifyInclusion(m, n, leafHash(new Uint8Array([9, 9])), p, root));
      assert.ok(!verifyInclusion((m + 1) % n, n, leafHash(d[m]!), p, root));
      const from = 1 + (y % (n - 1));
      const cp = consistencyPath(src, from, n);
      const old = rootAt(src, from);
      assert.ok(verifyConsistency(from, n, old, root, cp));
      assert.ok(!verifyConsistency(from, n, leafHash(Uint8Array.of(7)), root, cp));
      assert.ok(!verifyConsistency(from, n, old, leafHash(Uint8Array.of(7)), cp));
      if (cp.length > 0) assert.ok(!verifyConsistency(from, n, old, root, cp.slice(1)));
    }), { numRuns: 150 });
  });
});
