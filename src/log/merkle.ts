import { createHash, hash } from 'node:crypto';

/**
 * RFC 9162 section 2.1 Merkle tree hashing, proofs and their verification, over any source of
 * complete-subtree hashes. Pure: the LMDB-backed tree (merkle-tree.ts) and offline verifiers share it.
 */

/** MTH of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Uint8Array = new Uint8Array(createHash('sha256').digest());

/** The digest as a plain Uint8Array view (no copy). */
const view = (d: Buffer): Uint8Array => new Uint8Array(d.buffer, d.byteOffset, d.byteLength);

// Hashing is on the append path (a leaf and about one node a record): small inputs are laid out
// in one scratch buffer and hashed one-shot, which costs a third less than a streaming hash.
const SMALL = 4096;
const scratch = Buffer.allocUnsafe(SMALL + 1);
const pair = Buffer.allocUnsafe(65);

/** The leaf hash of one entry: SHA-256(0x00 ‖ entry bytes). */
export function leafHash(entry: Uint8Array): Uint8Array {
  if (entry.length > SMALL)
    return view(
      createHash('sha256')
        .update(new Uint8Array([0x00]))
        .update(entry)
        .digest(),
    );
  scratch[0] = 0x00;
  scratch.set(entry, 1);
  return view(hash('sha256', scratch.subarray(0, entry.length + 1), 'buffer'));
}

/** The hash of an interior node: SHA-256(0x01 ‖ left ‖ right). */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  // A proof from outside may hold hashes of another length: those take the general path (and fail to verify).
  if (left.length !== 32 || right.length !== 32)
    return view(
      createHash('sha256')
        .update(new Uint8Array([0x01]))
        .update(left)
        .update(right)
        .digest(),
    );
  pair[0] = 0x01;
  pair.set(left, 1);
  pair.set(right, 33);
  return view(hash('sha256', pair, 'buffer'));
}

/**
 * The hash of the complete subtree at `level` (0 = leaves) and `index` along that level, i.e.
 * MTH of entries [index·2^level, (index+1)·2^level).
 */
export type NodeSource = (level: number, index: number) => Uint8Array;

/** The largest power of two strictly smaller than `n` (n ≥ 2). */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function isPow2(n: number): boolean {
  return n > 0 && Number.isInteger(Math.log2(n));
}

/** MTH(D[start:end]) from stored complete subtrees: O(log n) reads. */
export function rangeHash(node: NodeSource, start: number, end: number): Uint8Array {
  const size = end - start;
  if (size <= 0) return EMPTY_ROOT;
  if (isPow2(size) && start % size === 0) return node(Math.log2(size), start / size);
  const k = splitPoint(size);
  return nodeHash(rangeHash(node, start, start + k), rangeHash(node, start + k, end));
}

/** The root of the tree of the first `size` entries. */
export function rootAt(node: NodeSource, size: number): Uint8Array {
  return rangeHash(node, 0, size);
}

/** PATH(m, D[0:size]) of RFC 9162 2.1.3.1: the inclusion proof of entry `index` (0-based). */
export function inclusionPath(node: NodeSource, index: number, size: number): Uint8Array[] {
  if (!(index >= 0 && index < size)) throw new RangeError(`leaf ${index} is outside a tree of size ${size}`);
  const out: Uint8Array[] = [];
  let start = 0;
  let end = size;
  let m = index;
  // Walk down from the root, then reverse: the RFC lists the path from the leaf up.
  while (end - start > 1) {
    const k = splitPoint(end - start);
    if (m < k) {
      out.push(rangeHash(node, start + k, end));
      end = start + k;
    } else {
      out.push(rangeHash(node, start, start + k));
      start += k;
      m -= k;
    }
  }
  return out.reverse();
}

/** PROOF(m, D[0:size]) of RFC 9162 2.1.4.1: the consistency proof between sizes `from` and `to`. */
export function consistencyPath(node: NodeSource, from: number, to: number): Uint8Array[] {
  if (!(from >= 0 && from <= to)) throw new RangeError(`no consistency proof from ${from} to ${to}`);
  if (from === 0 || from === to) return [];
  const out: Uint8Array[] = [];
  let start = 0;
  let end = to;
  let m = from;
  let complete = true;
  for (;;) {
    const n = end - start;
    if (m === n) {
      if (!complete) out.push(rangeHash(node, start, end));
      break;
    }
    const k = splitPoint(n);
    if (m <= k) {
      out.push(rangeHash(node, start + k, end));
      end = start + k;
    } else {
      out.push(rangeHash(node, start, start + k));
      start += k;
      m -= k;
      complete = false;
    }
  }
  return out.reverse();
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a).equals(Buffer.from(b));
}

/** Recomputes the root from a leaf hash and its inclusion path (RFC 9162 2.1.3.2). */
export function rootFromInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  path: readonly Uint8Array[],
): Uint8Array | undefined {
  if (!(index >= 0 && index < size)) return undefined;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (sn === 0) return undefined;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      if (fn % 2 === 0)
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : undefined;
}

/** Whether `path` proves entry `index` with leaf hash `leaf` is in the tree of `size` with `root`. */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  path: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const r = rootFromInclusion(index, size, leaf, path);
  return r !== undefined && equal(r, root);
}

/** Whether `path` proves the tree (`to`, `newRoot`) extends the tree (`from`, `oldRoot`) (RFC 9162 2.1.4.2). */
export function verifyConsistency(
  from: number,
  to: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  path: readonly Uint8Array[],
): boolean {
  if (!(from >= 0 && from <= to)) return false;
  if (from === to) return path.length === 0 && equal(oldRoot, newRoot);
  if (from === 0) return path.length === 0 && equal(oldRoot, EMPTY_ROOT);
  if (path.length === 0) return false;
  const c = isPow2(from) ? [oldRoot, ...path] : [...path];
  let fn = from - 1;
  let sn = to - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  let fr = c[0]!;
  let sr = c[0]!;
  for (const p of c.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      fr = nodeHash(p, fr);
      sr = nodeHash(p, sr);
      if (fn % 2 === 0)
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
    } else {
      sr = nodeHash(sr, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal(fr, oldRoot) && equal(sr, newRoot);
}

/**
 * The right edge of a growing tree: the roots of its complete subtrees, by level. Appending a leaf
 * returns the complete subtrees it finishes (level ≥ 1), which are what a store keeps.
 */
export interface Frontier {
  size: number;
  readonly roots: (Uint8Array | undefined)[];
}

/** Appends one leaf hash; returns the new complete nodes `[level, index, hash]`, lowest first. */
export function appendLeaf(f: Frontier, leaf: Uint8Array): Array<[number, number, Uint8Array]> {
  const made: Array<[number, number, Uint8Array]> = [];
  let hash = leaf;
  let level = 0;
  let index = f.size;
  while (index % 2 === 1) {
    hash = nodeHash(f.roots[level]!, hash);
    f.roots[level] = undefined;
    level++;
    index = Math.floor(index / 2);
    made.push([level, index, hash]);
  }
  f.roots[level] = hash;
  f.size++;
  return made;
}

/** The root of the frontier's tree (MTH of everything appended). */
export function frontierRoot(f: Frontier): Uint8Array {
  let acc: Uint8Array | undefined;
  for (let level = 0; level < f.roots.length; level++) {
    const r = f.roots[level];
    if (r) acc = acc ? nodeHash(r, acc) : r;
  }
  return acc ?? EMPTY_ROOT;
}
