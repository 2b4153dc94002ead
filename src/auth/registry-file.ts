import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { secretFileProblem } from '../kernel/secret-files.js';
import { digestsEqual, hashToken } from './tokens.js';

/**
 * A live view of an owner-only registry file (credentials, setup-authority accounts): re-read when
 * its inode, size, mtime or mode, or its directory's mode, change, checked at most every `recheckMs`. A file that
 * becomes invalid or readable by others fails closed: the view is empty until it is fixed, and `onError`
 * says why (never with token material). `onLoaded` is told each content it loads.
 */
export function watchRegistryFile<T>(
  path: string,
  read: (path: string) => T[],
  onError: (message: string) => void,
  recheckMs: number,
  onLoaded?: (entries: readonly T[]) => void,
): () => readonly T[] {
  let entries: T[] = [];
  let signature = '';
  let checkedAt = -Infinity;
  return () => {
    const now = performance.now();
    if (now - checkedAt < recheckMs) return entries;
    checkedAt = now;
    let sig = 'absent';
    try {
      sig = `dir:${statSync(dirname(path)).mode}`;
      const st = statSync(path);
      sig += `:${st.ino}:${st.size}:${st.mtimeMs}:${st.mode}`;
    } catch {
      /* absent: an empty registry */
    }
    if (sig === signature) return entries;
    signature = sig;
    try {
      const problem = existsSync(path) ? secretFileProblem(path) : undefined;
      if (problem) throw new Error(problem);
      entries = read(path);
    } catch (err) {
      entries = [];
      onError(`registry ${path} not loaded, refusing every token: ${(err as Error).message}`);
      return entries;
    }
    onLoaded?.(entries);
    return entries;
  };
}

/**
 * The entry whose `tokenHash` is the SHA-256 of `token`. Every entry is compared, with no early
 * exit, so the time taken does not depend on which one matched.
 */
export function entryForToken<T extends { readonly tokenHash: string }>(
  entries: readonly T[],
  token: string,
): T | undefined {
  const digest = hashToken(token);
  let found: T | undefined;
  for (const e of entries) if (digestsEqual(digest, e.tokenHash) && !found) found = e;
  return found;
}
