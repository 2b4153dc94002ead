import { mkdirSync, readFileSync } from 'node:fs';
export { syncDir, writeDurable } from '../auth/secret-files.js';

/** Makes a directory (and parents) owner-only. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}

/** Reads a JSON file, or undefined when it does not exist. */
export function readJsonFile<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
