import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStore, type LmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog, type LmdbEventLog } from '../../src/log/lmdb-log.js';
import { MissingRecordError } from '../../src/log/merkle-tree.js';
import { EMPTY_ROOT, frontierRoot, appendLeaf, leafHash, verifyConsistency, verifyInclusion, type Frontier } from '../../src/log/merkle.js';
import { tempDir } from '../helpers/temp.js';

const batch = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'T', at: '2026-01-01T00:00:00.000Z', data: { tag, i } }));

/** Roots recomputed from the stored record bytes alone, for every size. */
function naiveRoots(log: LmdbEventLog): Uint8Array[] {
  const f: Frontier = { size: 0, roots: [] };
  const roots = [EMPTY_ROOT];
  for (const { bytes } of log.readRaw(1)) { appendLeaf(f, leafHash(bytes)); roots.push(frontierRoot(f)); }
  return roots;
}

describe('LMDB Merkle tree', () => {
  it('keeps the tree of the records in step with every batch, across reopen, catch-up and rebuild', async () => {
    const dir = tempDir();
    let store: LmdbStore = openLmdbStore(dir.path);
    let log = openLmdbLog(store);
    try {
      for (let b = 0; b < 40; b++) {
        const staged = [log.stage(batch(b % 7, `a${b}`)), log.stage(batch(3, `b${b}`))];
        await Promise.all(staged.map((s) => s.durable));
      }
      const n = log.head().seq;
      assert.equal(log.tree.size(), n);
      assert.equal(log.tree.committedSize(), n);
      const roots = naiveRoots(log);
      for (let s = 0; s <= n; s++) assert.deepEqual(log.tree.root(s), roots[s], `root of ${s}`);
      const raw = [...log.readRaw(1)].map((r) => r.bytes);
      for (const seq of [1, 2, 77, n]) {
        assert.ok(verifyInclusion(seq - 1, n, leafHash(raw[seq - 1]!), log.tree.inclusion(seq, n), roots[n]!), `inclusion ${seq}`);
      }
      for (const from of [1, 5, 64, n - 1]) assert.ok(verifyConsistency(from, n, roots[from]!, roots[n]!, log.tree.consistency(from, n)));
      assert.throws(() => log.tree.root(n + 1), /beyond the committed log/);

      await log.close(); await store.close();
      store = openLmdbStore(dir.path); log = openLmdbLog(store);
      assert.deepEqual(log.tree.root(), roots[n]);
      await log.append(batch(5, 'after'));
      assert.deepEqual(log.tree.root(), naiveRoots(log)[n + 5]);

      // A log written before the tree existed: the tree is caught up at open.
      await store.root.transaction(() => { store.db('merkle', { encoding: 'binary' }).clearSync(); store.db('merkle-meta').clearSync(); });
      await log.close(); await store.close();
      store = openLmdbStore(dir.path); log = openLmdbLog(store);
      assert.deepEqual(log.tree.root(), naiveRoots(log)[n + 5]);
      assert.deepEqual(log.tree.root(7), roots[7]);

      assert.equal(await log.tree.rebuild(), n + 5);
      assert.deepEqual(log.tree.root(), naiveRoots(log)[n + 5]);
      assert.deepEqual(log.tree.root(n), roots[n]);
    } finally {
      await log.close(); await store.close();
      dir.cleanup();
    }
  });

  it('stops a catch-up at the first record the log does not hold, whole chunk or not', async () => {
    for (const missing of [1, 6]) {
      const dir = tempDir();
      let store: LmdbStore = openLmdbStore(dir.path);
      let log = openLmdbLog(store);
      try {
        await log.append(batch(10, 'gap'));
        // The tree is gone (a log written before it existed) and so is one record.
        await store.root.transaction(() => {
          store.db('merkle', { encoding: 'binary' }).clearSync();
          store.db('merkle-meta').clearSync();
          store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' }).removeSync(missing);
        });
        await log.close(); await store.close();
        store = openLmdbStore(dir.path);
        assert.throws(() => openLmdbLog(store), (err) => err instanceof MissingRecordError && err.seq === missing);
      } finally {
        await store.close();
        dir.cleanup();
      }
    }
  });
});
