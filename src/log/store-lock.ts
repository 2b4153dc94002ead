import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StoreLockedError } from './event-log.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes the lock file at `path` (holding the owner's pid), or throws what `inUse` makes of the pid of
 * the live process that holds it (`undefined` when the file kept changing hands, three attempts in a
 * row). A lock left by a process that no longer exists (kill -9) is taken over. Returns the release.
 */
export function acquirePidFileLock(path: string, inUse: (owner: number | undefined) => Error): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try { unlinkSync(path); } catch { /* already gone: nothing to release */ }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
      if (Number.isInteger(owner) && owner !== process.pid && alive(owner)) throw inUse(owner);
      unlinkSync(path);
    }
  }
  throw inUse(undefined);
}

/**
 * Takes the store's lock file (`vigil.lock`, holding the owner's pid) or throws StoreLockedError.
 * LMDB itself allows several processes; Vigil's one-writer design does not, so a second process
 * is refused. A lock left by a process that no longer exists (kill -9) is taken over.
 */
export function acquireStoreLock(dir: string): () => void {
  return acquirePidFileLock(join(dir, 'vigil.lock'), (owner) => new StoreLockedError(owner === undefined
    ? `could not take the lock on the store at ${dir}`
    : `the store at ${dir} is in use by process ${owner}; stop it first (one Vigil process per store)`));
}
