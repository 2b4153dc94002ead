import { chmodSync, closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Why a secret file is unsafe, or undefined when it and its directory are owner-only.
 * Group or other permission bits on either make it unsafe; the message names the path and the fix.
 */
export function secretFileProblem(path: string): string | undefined {
  const dir = dirname(path);
  if (process.platform === 'win32') return undefined;
  const dirMode = statSync(dir).mode & 0o777;
  if (dirMode & 0o077) return `${dir} is accessible to group or others (mode ${dirMode.toString(8)}); run: chmod 700 ${dir}`;
  if (!existsSync(path)) return undefined;
  const fileMode = statSync(path).mode & 0o777;
  if (fileMode & 0o077) return `${path} is readable or writable by group or others (mode ${fileMode.toString(8)}); run: chmod 600 ${path}`;
  return undefined;
}

/** Creates the directory of a secret file as 0700 when it does not exist yet. */
export function ensureSecretDir(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Writes a secret file atomically (temp file, fsync, rename), 0600, in a 0700 directory. */
export function writeSecretFile(path: string, content: string): void {
  ensureSecretDir(path);
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
