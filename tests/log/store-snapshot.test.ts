import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { AUDITORS_DIR, isAuditor } from '../../src/log/auditor-marks.js';
import { CutDuringReadError, SnapshotError, openStoreSnapshot, retryOnCut } from '../../src/log/store-snapshot.js';
import { verifyLog } from '../../src/log/verify.js';
import { verifyTree } from '../../src/log/verify-tree.js';
import { tempDir } from '../helpers/temp.js';

const batch = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ at: '2026-12-07T10:00:00.000Z', type: 'TestRecord', data: { tag, i } }));

describe('a read-only snapshot of a store', () => {
  it('reads and verifies the log up to the head it read at open while the writer goes on appending', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    const log = openLmdbLog(store);
    try {
      await log.append(batch(3, 'before'));
      const snap = openStoreSnapshot(dir.path);
      try {
        assert.ok(isAuditor(dir.path, process.pid), 'the snapshot marked this process as an auditor');
        await log.append(batch(2, 'after'));
        assert.equal(log.head().seq, 5);
        assert.equal(snap.log.head().seq, 3);
        assert.deepEqual([...snap.log.readRaw(1)].map((r) => r.seq), [1, 2, 3]);
        assert.deepEqual([...snap.log.read(2, 10)].map((r) => r.seq), [2, 3]);
        assert.deepEqual(verifyLog(snap.log), { ok: true, records: 3, head: snap.log.head().hash });
        const tree = verifyTree(snap.store, snap.log, undefined, 3);
        assert.equal(tree.ok, true, JSON.stringify(tree));
        assert.equal(snap.log.tree.size(), 3);
        assert.deepEqual(snap.log.tree.root(), log.tree.root(3));
      } finally {
        await snap.close();
      }
      assert.ok(!existsSync(join(dir.path, AUDITORS_DIR, String(process.pid))), 'closing removed the mark');
      assert.deepEqual([...log.read(4)].map((r) => r.data), [{ tag: 'after', i: 0 }, { tag: 'after', i: 1 }], 'nothing was written');
    } finally {
      await log.close();
      await store.close();
      dir.cleanup();
    }
  });

  it('stops with CutDuringReadError when a retention cut removed the records it had still to read', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    const log = openLmdbLog(store);
    try {
      for (let i = 0; i < 4; i++) await log.append(batch(300, `b${i}`));
      const snap = openStoreSnapshot(dir.path);
      try {
        let read = 0;
        assert.throws(
          () => {
            for (const { seq } of snap.log.readRaw(1)) {
              read = seq;
              // Past the first slice of 1,024 records, a cut (as retention records it) removes up to 1,100.
              if (seq === 1000) store.db('log-meta').putSync('cut', { firstSeq: 1100, prevHash: '0'.repeat(64), treeRoot: '' });
            }
          },
          (err: unknown) => err instanceof CutDuringReadError && err.seq === 1025 && err.firstSeq === 1100,
        );
        assert.equal(read, 1024, 'the first slice was read whole, under its own snapshot');
      } finally {
        await snap.close();
      }
    } finally {
      await log.close();
      await store.close();
      dir.cleanup();
    }
  });

  it('refuses a folder that holds no store rather than make one', () => {
    const dir = tempDir();
    try {
      assert.throws(() => openStoreSnapshot(join(dir.path, 'none')), SnapshotError);
      assert.ok(!existsSync(join(dir.path, 'none')));
    } finally {
      dir.cleanup();
    }
  });
});

describe('retryOnCut', () => {
  it('runs a verification again after a cut, at most three times, and nothing else again', async () => {
    let calls = 0;
    assert.equal(await retryOnCut(async () => (++calls === 1 ? Promise.reject(new CutDuringReadError(5, 9)) : 'verified')), 'verified');
    assert.equal(calls, 2);
    calls = 0;
    await assert.rejects(retryOnCut(async () => { calls++; throw new CutDuringReadError(5, 9); }), CutDuringReadError);
    assert.equal(calls, 3);
    calls = 0;
    await assert.rejects(retryOnCut(async () => { calls++; throw new Error('disk'); }), /disk/);
    assert.equal(calls, 1);
  });
});
