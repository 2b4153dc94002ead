import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';

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

/** Creates the directory of a secret file as 0700 when it does not exist yet. */
export function ensureSecretDir(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
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

/** Writes a file durably and atomically (temp file, fsync, rename, fsync of the directory), mode 0600. */
export function writeDurable(path: string, content: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, content);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
  syncDir(dirname(path));
}

/** Writes a secret file durably and atomically, 0600, in a 0700 directory. */
export function writeSecretFile(path: string, content: string): void {
  ensureSecretDir(path);
  writeDurable(path, content);
}
