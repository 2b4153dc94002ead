import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeOwnedDirs } from '../kernel/owned-files.js';
import { lockText } from './store-lock.js';

/**
 * Read-only auditors of a store (`vigil log verify`, `log export`, `replay --out` beside a serving
 * instance) say who they are here: one file per process, named by its pid and holding its pid, boot
 * id and start time, as `vigil.lock` does. LMDB makes every process that opens the environment,
 * reader or writer, hold a lock on `lock.mdb`, so without these marks a `vigil serve` starting
 * while an auditor reads would take the auditor for a second writer and refuse to start.
 */
export const AUDITORS_DIR = 'auditors';

/** The mark of process `pid` in the store at `storePath`. */
const markOf = (storePath: string, pid: number): string => join(storePath, AUDITORS_DIR, String(pid));

/** A file's text, or undefined when it cannot be read (gone, or never there). */
function readMark(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Whether process `pid` is a read-only auditor of the store: its mark exists and names the process
 * that now has that pid (same boot id and start time), so a mark left by an auditor that died does
 * not excuse another process that was given its pid later.
 */
export function isAuditor(storePath: string, pid: number): boolean {
  return pid > 0 && readMark(markOf(storePath, pid)) === lockText(pid);
}

/** This process's marks by store, with how many snapshots hold each (a test may open two at once). */
const held = new Map<string, { count: number; remove: () => void }>();

/**
 * Marks this process as a read-only auditor of the store at `storePath` (before it opens LMDB, so
 * its lock on `lock.mdb` is never seen without its mark) and removes marks whose process is gone.
 * Returns the release: the mark goes with the last snapshot that holds it, once LMDB is closed, or
 * when the process exits first.
 */
export function markAuditor(storePath: string): () => void {
  const mine = held.get(storePath);
  if (mine) mine.count++;
  else held.set(storePath, { count: 1, remove: writeMark(storePath) });
  let released = false;
  return () => {
    const entry = held.get(storePath);
    if (released || !entry) return;
    released = true;
    if (--entry.count > 0) return;
    held.delete(storePath);
    entry.remove();
  };
}

/** Writes this process's mark, after removing marks of processes that are gone; returns its removal. */
function writeMark(storePath: string): () => void {
  const dir = join(storePath, AUDITORS_DIR);
  // A root `vigil log verify` beside the service makes the folder the store's owner's, not root's.
  makeOwnedDirs(dir, 0o700);
  for (const name of readdirSync(dir)) {
    const pid = Number.parseInt(name, 10);
    if (String(pid) === name && pid !== process.pid && !isAuditor(storePath, pid))
      rmSync(join(dir, name), { force: true });
  }
  const mark = markOf(storePath, process.pid);
  writeFileSync(mark, lockText(process.pid), { mode: 0o600 });
  const remove = (): void => {
    process.removeListener('exit', remove);
    rmSync(mark, { force: true });
  };
  process.on('exit', remove);
  return remove;
}

/** The pids of the auditors reading the store now (an in-place `vigil replay` waits for none of them: it refuses). */
export function liveAuditors(storePath: string): number[] {
  let names: string[];
  try {
    names = readdirSync(join(storePath, AUDITORS_DIR));
  } catch {
    return [];
  }
  return names.map((n) => Number.parseInt(n, 10)).filter((pid) => isAuditor(storePath, pid));
}
