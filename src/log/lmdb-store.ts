import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { StoreLockedError } from './event-log.js';
import { isAuditor } from './auditor-marks.js';
import { STORE_LOCK_FILE, acquireStoreLock, nameHolder, otherLockHolders } from './store-lock.js';

/** One LMDB environment holding the log and every LMDB-backed read model. */
export interface LmdbStore {
  readonly path: string;
  readonly root: RootDatabase;
  /** Opens (or creates) a named database in the environment. */
  db<V = unknown, K extends import('lmdb').Key = import('lmdb').Key>(
    name: string,
    options?: { encoding?: 'msgpack' | 'binary' | 'json'; keyEncoding?: 'uint32' | 'ordered-binary' },
  ): Database<V, K>;
  close(): Promise<void>;
}

/**
 * Refuses the store when another process has its LMDB environment open. LMDB holds a shared lock
 * on `lock.mdb` for as long as a process has the environment open, and the kernel drops it when
 * the process ends, however it ends; the pid lock file cannot know as much (three processes
 * taking over one stale lock at once, a pid that now names another process). Each process checks
 * after its own open, so of two opening at once the later one sees the earlier; both may see each
 * other and both refuse, never both go on. A read-only auditor (a live `vigil log verify`, `log
 * export` or `replay --out`) holds the same lock but never writes: its mark (src/log/auditor-marks.ts)
 * names it, and it is not counted.
 */
function refuseSharedEnvironment(path: string, release: () => void): void {
  const others = otherLockHolders(join(path, 'lock.mdb'))?.filter((pid) => !isAuditor(path, pid));
  if (others === undefined || others.length === 0) return;
  const visible = others.filter((p) => p > 0);
  // This process took the pid lock file over as stale: leave it naming the holder, where there is one.
  if (visible.length === 1) nameHolder(join(path, STORE_LOCK_FILE), visible[0]!);
  else release();
  throw new StoreLockedError(
    `the store at ${path} is in use by ` +
      `${visible.length > 0 ? `process ${visible.join(', ')}` : 'a process whose pid is not visible here'}; stop it ` +
      `first (one Vigil process per store)`,
  );
}

/**
 * An LMDB environment's folder, made (or tightened, where an older version left it open) 0700: the
 * store and the read side hold evidence, the audit trail and token hashes, for the owner only.
 */
export function ownerOnlyFolder(path: string): void {
  mkdirSync(path, { recursive: true, mode: 0o700 });
  chmodSync(path, 0o700);
}

/** An opened LMDB environment's files made 0600 (LMDB creates them 0644). */
export function ownerOnlyFiles(path: string): void {
  for (const file of ['data.mdb', 'lock.mdb']) if (existsSync(join(path, file))) chmodSync(join(path, file), 0o600);
}

/** Opens the store directory (created 0700), refusing one that another process holds. */
export function openLmdbStore(path: string): LmdbStore {
  ownerOnlyFolder(path);
  const release = acquireStoreLock(path);
  let root: RootDatabase | undefined;
  try {
    root = open({ path, maxDbs: 64, compression: false, cache: false });
    ownerOnlyFiles(path);
    refuseSharedEnvironment(path, release);
  } catch (err) {
    void root?.close().catch(() => undefined);
    // A refusal has settled the lock file already (refuseSharedEnvironment).
    if (!(err instanceof StoreLockedError)) release();
    throw err;
  }
  const opened = root;
  return {
    path,
    root: opened,
    db: (name, options) =>
      opened.openDB({
        name,
        encoding: options?.encoding ?? 'msgpack',
        keyEncoding: options?.keyEncoding,
        cache: false,
      }),
    async close() {
      await opened.flushed;
      await opened.close();
      release();
    },
  };
}
