import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeOwnedDirs } from '../../kernel/owned-files.js';
import { acquirePidFileLock } from '../../log/store-lock.js';
export { syncDir, writeDurable } from '../../kernel/secret-files.js';

/** Makes a directory (and parents) owner-only (as root: owned like the folder above). */
export function ensurePrivateDir(dir: string): void {
  makeOwnedDirs(dir, 0o700);
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

/** Another agent (or an enrollment) holds the state directory. */
export class StateDirInUse extends Error {
  override readonly name = 'StateDirInUse';
}

/**
 * Takes the state directory for this process (`agent.lock`, naming it by pid, boot id and start time): one agent per
 * state directory, since two would hand out the same sequences and each one's crash recovery would delete
 * the other's spool write in progress. A lock left by a process that is gone is taken over. Returns
 * the release. `vigil collector status` only reads, and takes no lock.
 */
export function lockStateDir(stateDir: string): () => void {
  ensurePrivateDir(stateDir);
  return acquirePidFileLock(
    join(stateDir, 'agent.lock'),
    (owner) =>
      new StateDirInUse(
        owner === undefined
          ? `could not take the lock on the collector state directory ${stateDir}`
          : `the collector state directory ${stateDir} is in use by process ${owner} (a running agent or ` +
              `enrollment); stop it first (one agent per state directory)`,
      ),
  );
}
