import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeOwnedDirs, ownershipFor, writeOwnedFile } from './owned-files.js';

export { ForeignOwnerError, refuseForeignOwner, syncDir } from './owned-files.js';

/**
 * Why a secret file is unsafe, or undefined when it and its directory are owner-only.
 * Group or other permission bits on either make it unsafe; the message names the path and the fix.
 */
export function secretFileProblem(path: string): string | undefined {
  const dir = dirname(path);
  if (process.platform === 'win32') return undefined;
  const dirMode = statSync(dir).mode & 0o777;
  if (dirMode & 0o077)
    return `${dir} is accessible to group or others (mode ${dirMode.toString(8)}); run: chmod 700 ${dir}`;
  if (!existsSync(path)) return undefined;
  const fileMode = statSync(path).mode & 0o777;
  if (fileMode & 0o077)
    return `${path} is readable or writable by group or others (mode ${fileMode.toString(8)}); run: chmod 600 ${path}`;
  return undefined;
}

/** Creates the directory of a secret file as 0700 when it does not exist yet (as root: owned like its parent). */
export function ensureSecretDir(path: string): void {
  makeOwnedDirs(dirname(path), 0o700);
}

/**
 * Writes a file durably and atomically (temp file, fsync, rename, fsync of the directory), keeping an existing
 * file's owner and mode; a new one is 0600 (as root: owned like its folder). Refuses a file of another user.
 */
export function writeDurable(path: string, content: string): void {
  writeOwnedFile(path, content, ownershipFor(path, 0o600));
}

/**
 * Writes a secret file durably and atomically in a 0700 directory, keeping an existing file's owner and its
 * owner's permission bits (never group or other ones); a new one is 0600.
 */
export function writeSecretFile(path: string, content: string): void {
  ensureSecretDir(path);
  writeOwnedFile(path, content, ownershipFor(path, 0o600, 0o700));
}
