import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { acquireStoreLock } from './store-lock.js';

/** One LMDB environment holding the log and every LMDB-backed read model. */
export interface LmdbStore {
  readonly path: string;
  readonly root: RootDatabase;
  /** Opens (or creates) a named database in the environment. */
  db<V = unknown, K extends import('lmdb').Key = import('lmdb').Key>(name: string, options?: { encoding?: 'msgpack' | 'binary' | 'json'; keyEncoding?: 'uint32' | 'ordered-binary' }): Database<V, K>;
  close(): Promise<void>;
}

/** Opens the store directory (created 0700), refusing one that another process holds. */
export function openLmdbStore(path: string): LmdbStore {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  const release = acquireStoreLock(path);
  let root: RootDatabase;
  try {
    root = open({ path, maxDbs: 64, compression: false, cache: false });
    // LMDB creates its files 0644; the store holds evidence and token hashes, so owner-only.
    for (const file of ['data.mdb', 'lock.mdb']) if (existsSync(join(path, file))) chmodSync(join(path, file), 0o600);
  } catch (err) {
    release();
    throw err;
  }
  return {
    path,
    root,
    db: (name, options) => root.openDB({ name, encoding: options?.encoding ?? 'msgpack', keyEncoding: options?.keyEncoding, cache: false }),
    async close() {
      await root.flushed;
      await root.close();
      release();
    },
  };
}
