import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openLmdbStore, type LmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { FatalStorageError, StoreLockedError } from '../../src/log/event-log.js';
import { otherLockHolders } from '../../src/log/store-lock.js';
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

  it('refuses a store another process has open even when its pid lock file says nobody holds it', async () => {
    const dir = tempDir();
    const url = new URL('../../src/log/lmdb-store.js', import.meta.url).href;
    const holder = spawn(process.execPath, ['--input-type=module', '-e',
      `const m = await import(${JSON.stringify(url)}); m.openLmdbStore(${JSON.stringify(dir.path)}); console.log('open'); setInterval(() => {}, 1000);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await once(holder.stdout!, 'data');
      // What a pid lock file cannot tell: its holder in another pid namespace (a container), or a
      // stale lock two processes took over at once. Here: the file names a process long gone.
      const lock = join(dir.path, 'vigil.lock');
      assert.match(readFileSync(lock, 'utf8'), new RegExp(`^${holder.pid} `));
      writeFileSync(lock, '2147483646 00000000-0000-0000-0000-000000000000:1');
      assert.throws(() => openLmdbStore(dir.path), (err: Error) => err instanceof StoreLockedError && err.message.includes(`in use by process ${holder.pid};`));
      // The refused process leaves the lock file naming the holder, so the next one is refused by it.
      assert.match(readFileSync(lock, 'utf8'), new RegExp(`^${holder.pid} [0-9a-f-]{36}:\\d+$`));
      holder.kill('SIGKILL');
      await once(holder, 'exit');
      // The kernel dropped the killed holder's lock: the store opens, taking over the stale file.
      const store = openLmdbStore(dir.path);
      assert.deepEqual(otherLockHolders(join(dir.path, 'lock.mdb')), []);
      await store.close();
    } finally {
      holder.kill('SIGKILL');
      dir.cleanup();
    }
  });

  it('reads lock holders only where the kernel table names this process\'s own lock on the file', () => {
    const dir = tempDir();
    try {
      const unlocked = join(dir.path, 'plain');
      writeFileSync(unlocked, '');
      assert.equal(otherLockHolders(unlocked), undefined);
    } finally { dir.cleanup(); }
  });
});
