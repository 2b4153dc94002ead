/**
 * The read side's own LMDB environment: its layout, what it records of itself (the meta and the
 * heap models' checkpoints), the index projections' databases, and when it is rebuilt from the log.
 */
import { readFileSync, rmSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { IndexKey, IndexProjection, IndexReader, IndexWriter } from '../types.js';
import { ownerOnlyFiles, ownerOnlyFolder } from '../../log/lmdb-store.js';

/** Bumped when the read side's layout changes: the whole read side is then rebuilt from the log. */
export const LAYOUT_VERSION = 1;

/** What the read side records of itself: how far it folded, with which models, and whether it was shut down. */
export interface Meta {
  layout: number;
  seq: number;
  versions: Record<string, number>;
  bootId: string;
  clean: boolean;
  origin?: number;
}

/** A heap projection's packed state, at the seq it was folded to. */
export interface Checkpoint {
  version: number;
  seq: number;
  state: Uint8Array;
}

/** The operating system's boot id: another one means the machine restarted since. */
export function bootId(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

/** Opens the read environment, or a fresh one when it cannot be opened (it is derived from the log). */
export function openEnv(path: string): RootDatabase {
  const opened = (): RootDatabase => {
    ownerOnlyFolder(path);
    const env = open({ path, maxDbs: 32, compression: false, cache: false, noSync: true });
    ownerOnlyFiles(path);
    return env;
  };
  try {
    return opened();
  } catch {
    rmSync(path, { recursive: true, force: true });
    return opened();
  }
}

/**
 * Whether the read models must be folded again from record 1: another layout or model version, a
 * fold past the log's head, or an operating-system crash while open (another boot, no clean shutdown).
 */
export function isStale(
  previous: Meta | undefined,
  versions: Record<string, number>,
  boot: string,
  log: { head(): { readonly seq: number } },
): boolean {
  return (
    !previous ||
    previous.layout !== LAYOUT_VERSION ||
    (!previous.clean && previous.bootId !== boot) ||
    previous.seq > log.head().seq ||
    Object.entries(versions).some(([name, v]) => previous.versions[name] !== v)
  );
}

/** The index projections' databases, by name, and the names of those that hold bytes (keys only or encoded). */
export function openIndexDbs(
  env: RootDatabase,
  indexes: readonly IndexProjection[],
): { readonly dbs: Map<string, Database<unknown, IndexKey>>; readonly binary: ReadonlySet<string> } {
  const binary = new Set(indexes.flatMap((ix) => [...(ix.keyOnlyDbs ?? []), ...(ix.binaryDbs ?? [])]));
  const dbs = new Map<string, Database<unknown, IndexKey>>();
  for (const ix of indexes)
    for (const name of ix.dbs)
      dbs.set(
        name,
        env.openDB({ name, encoding: binary.has(name) ? 'binary' : 'msgpack', cache: false }) as Database<
          unknown,
          IndexKey
        >,
      );
  return { dbs, binary };
}

/** How the index projections read and write their databases (a key-only entry is stored as empty bytes). */
export function indexAccess(
  dbs: ReadonlyMap<string, Database<unknown, IndexKey>>,
  binary: ReadonlySet<string>,
): { readonly reader: IndexReader; readonly writer: IndexWriter } {
  const writer: IndexWriter = {
    put(db, key, value) {
      dbs.get(db)!.putSync(key as never, value === null && binary.has(db) ? new Uint8Array(0) : value);
    },
    remove(db, key) {
      dbs.get(db)!.removeSync(key as never);
    },
  };
  const reader = { get: (db: string, key: IndexKey) => dbs.get(db)!.get(key as never) };
  return { reader, writer };
}
