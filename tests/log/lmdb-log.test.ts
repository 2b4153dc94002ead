import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { openLmdbStore, type LmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { FatalStorageError } from '../../src/log/event-log.js';
import { tempDir } from '../helpers/temp.js';
import { logContract } from './log-contract.js';

logContract({
  name: 'LMDB',
  async open() {
    const dir = tempDir();
    let store: LmdbStore = openLmdbStore(dir.path);
    let log = openLmdbLog(store);
    return {
      log,
      async reopen() {
        await log.close();
        await store.close();
        store = openLmdbStore(dir.path);
        log = openLmdbLog(store);
        return log;
      },
      async tamper(seq, bytes) {
        const db = store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
        if (bytes) await db.put(seq, bytes); else await db.remove(seq);
      },
      async close() {
        await log.close();
        await store.close();
        dir.cleanup();
      },
    };
  },
});

describe('LMDB log', () => {
  it('commits a batch whole or not at all', async () => {
    const dir = tempDir();
    try {
      let store = openLmdbStore(dir.path);
      let fatal: Error | undefined;
      let log = openLmdbLog(store, (e) => { fatal = e; });
      await log.append([{ type: 'A', at: '2026-01-01T00:00:00Z', data: 1 }]);
      await assert.rejects(
        log.append([{ type: 'B', at: '2026-01-01T00:00:00Z', data: 2 }, { type: 'C', at: '2026-01-01T00:00:00Z', data: 3 }], () => {
          throw new Error('disk on fire');
        }),
        FatalStorageError,
      );
      assert.ok(fatal instanceof FatalStorageError);
      await assert.rejects(log.append([{ type: 'D', at: '2026-01-01T00:00:00Z', data: 4 }]), FatalStorageError);
      await store.close();
      store = openLmdbStore(dir.path);
      log = openLmdbLog(store);
      assert.deepEqual([...log.read(1)].map((r) => r.type), ['A']);
      assert.equal(log.head().seq, 1);
      await store.close();
    } finally { dir.cleanup(); }
  });

  it('never leaves a hole: a batch staged behind one that failed is not committed either', async () => {
    const dir = tempDir();
    try {
      let store = openLmdbStore(dir.path);
      let log = openLmdbLog(store, () => {});
      await log.append([{ type: 'A', at: '2026-01-01T00:00:00Z', data: 1 }]);
      // Staged in the same turn, before the first one's failure is known: it chains behind it.
      const failing = log.stage([{ type: 'B', at: '2026-01-01T00:00:00Z', data: 2 }], () => { throw new Error('disk on fire'); });
      const behind = log.stage([{ type: 'C', at: '2026-01-01T00:00:00Z', data: 3 }]);
      await assert.rejects(failing.durable, FatalStorageError);
      await assert.rejects(behind.durable, FatalStorageError);
      await store.close();
      store = openLmdbStore(dir.path);
      log = openLmdbLog(store);
      assert.deepEqual([...log.read(1)].map((r) => `${r.seq} ${r.type}`), ['1 A']);
      assert.equal(log.head().seq, 1);
      assert.equal(log.tree.size(), 1);
      await store.close();
    } finally { dir.cleanup(); }
  });

  it('refuses a second process on the same store with a clear message', async () => {
    const dir = tempDir();
    try {
      const store = openLmdbStore(dir.path);
      const url = new URL('../../src/log/lmdb-store.js', import.meta.url).href;
      const child = spawnSync(process.execPath, ['--input-type=module', '-e',
        `import(${JSON.stringify(url)}).then((m) => { try { m.openLmdbStore(${JSON.stringify(dir.path)}); console.log('opened'); } catch (e) { console.log(e.name + ': ' + e.message); } })`], { encoding: 'utf8' });
      assert.match(child.stdout, /StoreLockedError: the store at .* is in use by process \d+/);
      await store.close();
      // Once the owner has closed it, the store opens again.
      const again = openLmdbStore(dir.path);
      await again.close();
    } finally { dir.cleanup(); }
  });
});
