import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Database } from 'lmdb';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { frontierOfText, frontierText, seedMerkleTree } from '../../src/log/merkle-tree.js';
import { appendLeaf, frontierRoot, leafHash, type Frontier } from '../../src/log/merkle.js';
import { tempDir } from '../helpers/temp.js';

const batch = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'T', at: '2026-01-01T00:00:00.000Z', data: { tag, i } }));

describe('a Merkle tree started from a recorded frontier (a JetStream copy that starts from a cut)', () => {
  it('has the same roots, inclusion proofs of the records after the frontier and consistency proofs from it as the whole tree', async () => {
    const whole = tempDir();
    const seeded = tempDir();
    const a = openLmdbStore(whole.path);
    const b = openLmdbStore(seeded.path);
    try {
      const full = openLmdbLog(a);
      // 1,280 = 1,024 + 256 records before the cut: frontier roots at levels 10 and 8.
      for (let i = 0; i < 10; i++) await full.append(batch(128, `p${i}`));
      const cutAt = full.head().seq;
      assert.equal(cutAt, 1280);
      const frontier = frontierText(full.tree.frontierAt(cutAt));
      assert.equal(frontier.length, 2);
      // The other store starts there, as jetstream-log.ts's startFromCut does.
      seedMerkleTree(b, frontierOfText(cutAt, frontier));
      const meta = b.db('log-meta') as Database<unknown, string>;
      await b.root.transaction(() => {
        meta.putSync('head', full.head());
        meta.putSync('cut', { firstSeq: cutAt + 1, prevHash: full.head().hash, treeRoot: Buffer.from(full.tree.root(cutAt)).toString('base64') });
      });
      const copy = openLmdbLog(b);
      assert.deepEqual(copy.tree.root(cutAt), full.tree.root(cutAt));
      for (let i = 0; i < 9; i++) {
        const more = batch(100 + i, `q${i}`);
        await full.append(more);
        await copy.append(more);
      }
      const n = full.head().seq;
      assert.deepEqual(copy.head(), full.head(), 'the same records chain the same way after the cut');
      for (const size of [cutAt, cutAt + 1, 1536, 2048, n]) assert.deepEqual(copy.tree.root(size), full.tree.root(size), `root of ${size}`);
      for (const seq of [cutAt + 1, 1500, 2049, n]) assert.deepEqual(copy.tree.inclusion(seq, n), full.tree.inclusion(seq, n), `inclusion of ${seq}`);
      for (const from of [cutAt, 2048, n - 1]) assert.deepEqual(copy.tree.consistency(from, n), full.tree.consistency(from, n), `consistency from ${from}`);
      assert.throws(() => copy.tree.inclusion(5, n), /missing/, 'a proof into the prefix cannot be made from the frontier alone');
      await full.close();
      await copy.close();
    } finally {
      await a.close();
      await b.close();
      whole.cleanup();
      seeded.cleanup();
    }
  });

  it('reads back any frontier it writes, and refuses roots that do not fit the size', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 5000 }), (size) => {
      const f: Frontier = { size: 0, roots: [] };
      for (let i = 0; i < size; i++) appendLeaf(f, leafHash(new Uint8Array([i & 255, i >> 8])));
      const text = frontierText(f);
      const back = frontierOfText(size, text);
      assert.deepEqual(Buffer.from(frontierRoot(back)), Buffer.from(frontierRoot(f)));
      assert.throws(() => frontierOfText(size, [...text, text[0]!]), /does not fit/);
      if (text.length > 1) assert.throws(() => frontierOfText(size, text.slice(1)), /too few roots/);
    }), { numRuns: 200 });
  });
});
