import { linkSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
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
 * Who a process is, beyond its pid, which the kernel hands out again: this boot's id and the
 * process's start time (field 22 of `/proc/<pid>/stat`, in clock ticks since boot). Undefined
 * where /proc does not say (another OS, a hidden pid).
 */
export function identity(pid: number): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
    const started = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    return started === undefined ? undefined : `${boot}:${started}`;
  } catch {
    return undefined;
  }
}

/** What a lock file holds for the process `pid`: its pid, then (where /proc says) its boot id and start time. */
export function lockText(pid: number): string {
  const who = identity(pid);
  return who === undefined ? String(pid) : `${pid} ${who}`;
}

/** A file's text, or undefined once it is gone. */
function readOrGone(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Whether the lock file's holder still runs: its pid is alive and, where the file recorded who it
 * was, the process with that pid now is the same one. After a reboot or a long run, a dead holder's
 * pid may belong to another process; the recorded boot id and start time tell it apart.
 */
function held(content: string): number | undefined {
  const [pidText, recorded] = content.trim().split(' ');
  const owner = Number.parseInt(pidText ?? '', 10);
  // This process's own pid: an earlier holder's (a container's pid 1 started again), or a store this
  // process closes and opens again (lmdb-js shares one environment within a process).
  if (!Number.isInteger(owner) || owner <= 0 || owner === process.pid || !alive(owner)) return undefined;
  if (recorded === undefined) return owner;
  const now = identity(owner);
  return now !== undefined && now !== recorded ? undefined : owner;
}

/**
 * Removes the lock file at `path` judged stale with the text `stale`. Another process may have taken
 * it over since (two starting at once after a crash): the file is moved aside in one step, and what
 * was moved is looked at; a fresh lock moved by mistake is put back, unless a third process has taken
 * the place meanwhile. A check and then a removal would leave a moment to remove a fresh lock.
 */
function takeOver(path: string, stale: string): void {
  const aside = `${path}.${process.pid}.stale`;
  try {
    renameSync(path, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    if (readOrGone(aside) === stale) return;
    try {
      linkSync(aside, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Takes the lock file at `path` (holding the owner's pid, then its boot id and start time), or
 * throws what `inUse` makes of the pid of the live process that holds it (`undefined` when the file
 * kept changing hands, three attempts in a row). A lock left by a process that no longer exists
 * (kill -9, a power loss) is taken over, even when its pid has since gone to another process.
 * Returns the release. `seams.beforeTakeover` runs between judging a lock stale and taking it over
 * (tests put a rival's takeover there).
 */
export function acquirePidFileLock(
  path: string,
  inUse: (owner: number | undefined) => Error,
  seams: { beforeTakeover?: () => void } = {},
): () => void {
  // Written whole beside the lock, then linked into place: no one ever reads a lock file half written.
  const mine = `${path}.${process.pid}.tmp`;
  writeFileSync(mine, lockText(process.pid), { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(mine, path);
        return () => {
          try {
            unlinkSync(path);
          } catch {
            /* already gone: nothing to release */
          }
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const stale = readOrGone(path);
        if (stale === undefined) continue;
        const owner = held(stale);
        if (owner !== undefined) throw inUse(owner);
        seams.beforeTakeover?.();
        takeOver(path, stale);
      }
    }
    throw inUse(undefined);
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Makes the lock file at `path`, this process's, name `owner` instead (its pid, boot id and start
 * time), replacing it in one step: what a process that the kernel's lock table refused leaves
 * behind, so that the file names the store's real holder rather than no one.
 */
export function nameHolder(path: string, owner: number): void {
  const staged = `${path}.${process.pid}.tmp`;
  writeFileSync(staged, lockText(owner), { mode: 0o600 });
  renameSync(staged, path);
}

/** A line of /proc/locks: `1: POSIX  ADVISORY  READ 7362 fe:00:2179698 0 ` +
  `0`, or `1: -> …` for a process waiting for one. */
const LOCK_LINE = /^\d+:\s+(?:->\s+)?\S+\s+\S+\s+\S+\s+(-?\d+)\s+([0-9a-f]+):([0-9a-f]+):(\d+)\s/gm;

/**
 * The other processes that hold (or wait for) a lock on `file`, from the kernel's table of file
 * locks (/proc/locks): a process that has ended, however it ended, holds none, whatever its pid
 * file says. Their pids (-1 for an open-file-description lock, which no one process owns); the
 * kernel lists only the processes of this one's pid namespace. Undefined where the table cannot
 * tell: no /proc/locks, or this process's own lock on `file` (it holds one) is not in it
 * under `file`'s device and inode, as on file systems that tell stat other numbers.
 */
export function otherLockHolders(file: string): number[] | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  const { dev, ino } = statSync(file, { bigint: true });
  // glibc's major() and minor() of the stat device number.
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  const pids: number[] = [];
  for (const m of table.matchAll(LOCK_LINE)) {
    if (BigInt(`0x${m[2]}`) === major && BigInt(`0x${m[3]}`) === minor && BigInt(m[4]!) === ino)
      pids.push(Number(m[1]));
  }
  if (!pids.includes(process.pid)) return undefined;
  return [...new Set(pids.filter((p) => p !== process.pid))];
}

/** The store's pid lock file, in the store folder. */
export const STORE_LOCK_FILE = 'vigil.lock';

/**
 * Takes the store's lock file (`vigil.lock`, naming its holder) or throws StoreLockedError.
 * LMDB itself allows several processes; Vigil's one-writer design does not, so a second process
 * is refused. A lock left by a process that no longer exists (kill -9, a power loss) is taken over.
 */
export function acquireStoreLock(dir: string): () => void {
  return acquirePidFileLock(
    join(dir, STORE_LOCK_FILE),
    (owner) =>
      new StoreLockedError(
        owner === undefined
          ? `could not take the lock on the store at ${dir}`
          : `the store at ${dir} is in use by process ${owner}; stop it first (one Vigil process per store)`,
      ),
  );
}
