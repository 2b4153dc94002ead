import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * A file that belongs to another user, which this process can neither rewrite as it is (only root can
 * chown) nor replace without locking that user out: the message names the user to run as.
 */
export class ForeignOwnerError extends Error {
  override readonly name = 'ForeignOwnerError';
  constructor(
    readonly path: string,
    readonly owner: string,
  ) {
    super(`${path} belongs to ${owner}: run this as ${owner} (sudo -u ${owner} vigil ...)`);
  }
}

/** The owner and permission bits a write gives a file. */
export interface Ownership {
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
}

/** The effective uid, or undefined where there is none (Windows). */
function euid(): number | undefined {
  return typeof process.geteuid === 'function' ? process.geteuid() : undefined;
}

/** The login name of a uid from /etc/passwd, or `uid N` when it has none there. */
export function userName(uid: number): string {
  try {
    for (const line of readFileSync('/etc/passwd', 'utf8').split('\n')) {
      const [name, , id] = line.split(':');
      if (name && Number(id) === uid) return name;
    }
  } catch {
    /* no passwd file: the number says it */
  }
  return `uid ${uid}`;
}

/** The nearest existing path at or above `path` (the one whose owner a new file or directory takes). */
function nearestExisting(path: string): { path: string; stats: Stats } {
  for (let p = resolve(path); ; p = dirname(p)) {
    try {
      return { path: p, stats: statSync(p) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || dirname(p) === p) throw err;
    }
  }
}

/**
 * Refuses, before anything is read or written, a file this process cannot rewrite keeping its owner: one
 * that belongs to another user, or that sits in a folder of another user this process cannot even look
 * into, when this process is not root (root keeps the owner with chown). A file yet to be made is not refused.
 */
export function refuseForeignOwner(path: string): void {
  const me = euid();
  if (me === undefined || me === 0) return;
  let owner: number;
  try {
    owner = statSync(path).uid;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    if (code !== 'EACCES') throw err;
    owner = nearestVisible(dirname(path));
  }
  if (owner !== me) throw new ForeignOwnerError(path, userName(owner));
}

/** The owner of the nearest folder at or above `dir` this process may look at. */
function nearestVisible(dir: string): number {
  for (let p = resolve(dir); ; p = dirname(p)) {
    try {
      return statSync(p).uid;
    } catch (err) {
      if (dirname(p) === p) throw err;
    }
  }
}

/** Refuses a path that is a symbolic link: a write replaces the file named, never one elsewhere. */
function refuseSymlink(path: string): Stats | undefined {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  if (st.isSymbolicLink()) throw new Error(`${path} is a symbolic link: refusing to write through it`);
  return st;
}

/**
 * The owner and mode a (re)write of `path` gives it: an existing file keeps its own (its mode limited to
 * `maxMode`); a new one gets `mode` and, when this process is root, the owner of its folder, so a root
 * command in a folder a service user owns does not leave a file that user cannot read.
 */
export function ownershipFor(path: string, mode: number, maxMode = 0o7777): Partial<Ownership> & { mode: number } {
  const existing = refuseSymlink(path);
  if (existing) return { uid: existing.uid, gid: existing.gid, mode: existing.mode & 0o7777 & maxMode };
  if (euid() !== 0) return { mode };
  const folder = nearestExisting(dirname(path)).stats;
  return { uid: folder.uid, gid: folder.gid, mode };
}

/**
 * Creates `dir` and its missing parents with `mode`; as root, each one made takes the owner of the
 * nearest folder that existed above it.
 */
export function makeOwnedDirs(dir: string, mode: number): void {
  if (existsSync(dir)) return;
  const above = nearestExisting(dir);
  const first = mkdirSync(dir, { recursive: true, mode });
  if (euid() !== 0 || first === undefined) return;
  for (let p = resolve(dir); p.length >= first.length; p = dirname(p)) {
    const fd = openSync(p, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    try {
      fchownSync(fd, above.stats.uid, above.stats.gid);
    } finally {
      closeSync(fd);
    }
  }
}

/** fsyncs a directory so a rename or unlink in it is durable. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Gives an open file this uid and gid: root always can; another user only its own groups (else left as is). */
function keepOwner(fd: number, uid: number, gid: number): void {
  const st = fstatSync(fd);
  if (st.uid === uid && st.gid === gid) return;
  try {
    fchownSync(fd, uid, gid);
  } catch (err) {
    if (euid() === 0 || (err as NodeJS.ErrnoException).code !== 'EPERM') throw err;
  }
}

/**
 * Writes `path` durably and atomically: a temp file beside it (never through a link), given `owner`'s mode
 * and, when it names one this process is not, its uid and gid (only root can), fsynced, renamed over
 * `path`, the folder fsynced. A file another user owns is refused first (refuseForeignOwner).
 */
export function writeOwnedFile(path: string, content: string, owner: Partial<Ownership> & { mode: number }): void {
  refuseForeignOwner(path);
  const tmp = `${path}.tmp-${process.pid}`;
  rmSync(tmp, { force: true });
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
  const fd = openSync(tmp, flags, 0o600);
  try {
    if (owner.uid !== undefined && owner.gid !== undefined) keepOwner(fd, owner.uid, owner.gid);
    fchmodSync(fd, owner.mode);
    writeSync(fd, content);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
  closeSync(fd);
  renameSync(tmp, path);
  syncDir(dirname(path));
}

/**
 * Renames `from` over `to` (both in one folder), first giving `from` the owner and mode `to` has, so a
 * file replaced by a staged one (a rotated key) keeps who may read it; then fsyncs the folder.
 */
export function renameKeepingOwner(from: string, to: string): void {
  refuseForeignOwner(to);
  const target = refuseSymlink(to);
  if (target) {
    const fd = openSync(from, constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0));
    try {
      keepOwner(fd, target.uid, target.gid);
      fchmodSync(fd, target.mode & 0o7777);
    } finally {
      closeSync(fd);
    }
  }
  renameSync(from, to);
  syncDir(dirname(to));
}
