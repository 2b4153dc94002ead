import type { Database } from 'lmdb';
import type { LmdbStore } from './lmdb-store.js';
import type { LentReader } from './lent-range.js';
import {
  appendLeaf,
  consistencyPath,
  frontierRoot,
  inclusionPath,
  leafHash,
  nodeHash,
  rootAt,
  type Frontier,
  type NodeSource,
} from './merkle.js';

/** Only every eighth level is stored (tiles of 256): about one node per 256 records. */
const TILE = 8;

/**
 * The RFC 9162 Merkle tree over the LMDB log. It keeps the complete subtrees of levels 8, 16, 24...
 * (`merkle`, keyed `[level, index]`: tiles of 256, about one 32-byte node per 256 records); nodes
 * inside a tile are rehashed from the level below, and leaves from the stored record bytes, when a
 * proof needs them. Its size is written with the records it covers,
 * in the same transaction, so the tree is never behind or ahead of the log.
 */
export interface MerkleTree {
  /** Records covered, staged ones included (equals the log head's seq). */
  size(): number;
  /** Records covered and durable: proofs and roots may be asked up to here. */
  committedSize(): number;
  /** Hashes the batch's leaves now (call order) and returns the writes to run in its transaction. */
  stage(encoded: readonly Uint8Array[]): () => void;
  /** As `stage`, with the leaf hashes already made (the log hashes them once, for the tree and its signer). */
  stageLeaves(leaves: readonly Uint8Array[]): () => void;
  /** The root of everything staged (committed or not): what a commit's signed head signs. */
  stagedRoot(): Uint8Array;
  /** The root everything staged would have with `leaves` after it, staging nothing (a head checked before it folds). */
  rootAfter(leaves: readonly Uint8Array[]): Uint8Array;
  /** Marks everything up to `size` durable. */
  settle(size: number): void;
  /** The root of the first `size` records (default: the committed size). */
  root(size?: number): Uint8Array;
  /** The inclusion path of record `seq` in the tree of `size` records. */
  inclusion(seq: number, size: number): Uint8Array[];
  /** The consistency path between trees of `from` and `to` records. */
  consistency(from: number, to: number): Uint8Array[];
  /**
   * The frontier of the first `size` records from stored nodes (a size past a retention cut needs no removed record
   * when it is a multiple of 256).
   */
  frontierAt(size: number): Frontier;
  /** Clears the stored nodes and hashes the whole log again (`vigil replay`); returns the size. */
  rebuild(): Promise<number>;
}

/**
 * A node of the tree that has to be hashed from a record the log does not hold: below a retention
 * cut only the tiles' stored nodes remain, so a root, frontier or proof that needs a removed
 * record's bytes cannot be made from the live store.
 */
export class MissingRecordError extends Error {
  override readonly name = 'MissingRecordError';
  constructor(readonly seq: number) {
    super(`record ${seq} is missing from the log`);
  }
}

/**
 * Opens the tree kept in `store` over the log whose records `leaves` reads, each as its leaf hash
 * (`leafHash`); a log older than the tree (or a tree cut short) is caught up now.
 */
export function openMerkleTree(store: LmdbStore, leaves: LentReader<Uint8Array>, headSeq: number): MerkleTree {
  const nodes: Database<Uint8Array, [number, number]> = store.db('merkle', {
    encoding: 'binary',
  }) as unknown as Database<Uint8Array, [number, number]>;
  const meta: Database<number, string> = store.db('merkle-meta');
  const node: NodeSource = (level, index) => {
    if (level === 0) {
      const leaf = leaves.get(index + 1);
      if (!leaf) throw new MissingRecordError(index + 1);
      return leaf;
    }
    if (level > TILE && level % TILE !== 0) {
      // A frontier root a JetStream node started from (seedMerkleTree) is stored at its own level;
      // any other node is hashed from its two children.
      const pinned = nodes.get([level, index]);
      return pinned ? Uint8Array.from(pinned) : nodeHash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1));
    }
    if (level % TILE !== 0) {
      // Inside the lowest tile: hash up from the leaves, at most 2^7 of them.
      const base = level - (level % TILE);
      const width = 2 ** (level - base);
      let row = Array.from({ length: width }, (_, j) => node(base, index * width + j));
      while (row.length > 1)
        row = Array.from({ length: row.length / 2 }, (_, j) => nodeHash(row[2 * j]!, row[2 * j + 1]!));
      return row[0]!;
    }
    const h = nodes.get([level, index]);
    if (!h) throw new Error(`merkle node ${level}/${index} is missing`);
    return Uint8Array.from(h);
  };
  // A tree over records the log no longer holds (its tail was cut) cannot be used: every use says
  // which record is missing, and `vigil log verify` (which walks the records, not the tree) names it.
  let broken: MissingRecordError | undefined;
  let frontier: Frontier = { size: 0, roots: [] };
  try {
    frontier = loadFrontier(node, meta.get('size') ?? 0);
  } catch (err) {
    if (!(err instanceof MissingRecordError)) throw err;
    broken = err;
  }
  let committed = frontier.size;
  const usable = (): void => {
    if (broken) throw broken;
  };

  function catchUp(to: number): void {
    // Hashes records the tree does not cover yet (a log written before the tree existed, a replay), in chunks.
    while (frontier.size < to) {
      const from = frontier.size + 1;
      const end = Math.min(to, frontier.size + 50_000);
      const hashes: Uint8Array[] = [];
      for (const { seq, value } of leaves.range(from, end)) {
        if (seq !== from + hashes.length) break;
        hashes.push(value);
      }
      if (hashes.length === 0) throw new MissingRecordError(from);
      // One write of the chunk's tile nodes and of the size it reaches, not one a record.
      const write = stageLeaves(hashes);
      store.root.transactionSync(write);
    }
    committed = frontier.size;
  }

  function stage(encoded: readonly Uint8Array[]): () => void {
    return stageLeaves(encoded.map(leafHash));
  }

  function stageLeaves(hashes: readonly Uint8Array[]): () => void {
    const made: Array<[number, number, Uint8Array]> = [];
    for (const leaf of hashes) for (const n of appendLeaf(frontier, leaf)) if (n[0] % TILE === 0) made.push(n);
    const size = frontier.size;
    return () => {
      for (const [level, index, hash] of made) nodes.putSync([level, index], hash);
      meta.putSync('size', size);
    };
  }

  function bounded(size: number): number {
    if (!(Number.isInteger(size) && size >= 0 && size <= committed))
      throw new RangeError(`tree size ${size} is beyond the committed log (${committed})`);
    return size;
  }

  if (!broken) catchUp(headSeq);
  return {
    size: () => (usable(), frontier.size),
    committedSize: () => (usable(), committed),
    stage: (encoded) => (usable(), stage(encoded)),
    stageLeaves: (leaves) => (usable(), stageLeaves(leaves)),
    stagedRoot: () => (usable(), frontierRoot(frontier)),
    rootAfter(leaves) {
      usable();
      const f: Frontier = { size: frontier.size, roots: [...frontier.roots] };
      for (const leaf of leaves) appendLeaf(f, leaf);
      return frontierRoot(f);
    },
    settle(size) {
      committed = Math.max(committed, Math.min(size, frontier.size));
    },
    root: (size = committed) => {
      usable();
      return size === frontier.size && size === committed ? frontierRoot(frontier) : rootAt(node, bounded(size));
    },
    inclusion: (seq, size) => (usable(), inclusionPath(node, seq - 1, bounded(size))),
    consistency: (from, to) => (usable(), consistencyPath(node, bounded(from), bounded(to))),
    frontierAt: (size) => (usable(), loadFrontier(node, bounded(size))),
    async rebuild() {
      usable();
      const to = frontier.size;
      await store.root.transaction(() => {
        nodes.clearSync();
        meta.removeSync('size');
      });
      frontier = { size: 0, roots: [] };
      committed = 0;
      catchUp(to);
      await store.root.flushed;
      return frontier.size;
    },
  };
}

/** The frontier of a stored tree of `size` leaves: the complete subtree for each set bit of the size. */
function loadFrontier(node: NodeSource, size: number): Frontier {
  const roots: (Uint8Array | undefined)[] = [];
  let start = 0;
  for (let level = Math.floor(Math.log2(Math.max(size, 1))); level >= 0; level--) {
    const width = 2 ** level;
    if (start + width <= size) {
      roots[level] = node(level, start / width);
      start += width;
    }
  }
  return { size, roots };
}

/**
 * Starts an empty store's tree at `frontier` (a JetStream node that starts behind a purged prefix,
 * from the frontier its cut recorded): the frontier's roots are stored at their levels and the size
 * set, so roots, checkpoints and proofs of the records after it work; proofs into the prefix do not.
 */
export function seedMerkleTree(store: LmdbStore, frontier: Frontier): void {
  const nodes: Database<Uint8Array, [number, number]> = store.db('merkle', {
    encoding: 'binary',
  }) as unknown as Database<Uint8Array, [number, number]>;
  const meta: Database<number, string> = store.db('merkle-meta');
  store.root.transactionSync(() => {
    let start = 0;
    for (let level = frontier.roots.length - 1; level >= 0; level--) {
      const root = frontier.roots[level];
      if (!root) continue;
      nodes.putSync([level, start / 2 ** level], root);
      start += 2 ** level;
    }
    if (start !== frontier.size) throw new Error(`a frontier of ${frontier.size} records has roots for ${start}`);
    meta.putSync('size', frontier.size);
  });
}

/** A frontier as a cut records it: base64 roots, largest first. */
export function frontierText(f: Frontier): string[] {
  const out: string[] = [];
  for (let level = f.roots.length - 1; level >= 0; level--) {
    const r = f.roots[level];
    if (r) out.push(Buffer.from(r).toString('base64'));
  }
  return out;
}

/**
 * The frontier of `size` records from the roots a cut recorded (largest first); throws when they do not fit the size.
 */
export function frontierOfText(size: number, roots: readonly string[]): Frontier {
  const f: Frontier = { size, roots: [] };
  let i = 0;
  for (let level = Math.floor(Math.log2(Math.max(size, 1))); level >= 0; level--) {
    if (Math.floor(size / 2 ** level) % 2 === 1) {
      const r = roots[i++];
      if (r === undefined) throw new Error(`the recorded frontier has too few roots for ${size} records`);
      f.roots[level] = Uint8Array.from(Buffer.from(r, 'base64'));
    }
  }
  if (i !== roots.length || size === 0) throw new Error(`the recorded frontier does not fit ${size} records`);
  return f;
}
