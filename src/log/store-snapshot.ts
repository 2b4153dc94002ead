import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { SIGNED_HEAD } from './lmdb-log.js';
import { markAuditor } from './auditor-marks.js';
import type { LogCut, LogHead } from './event-log.js';
import { lentReader } from './lent-range.js';
import type { LmdbStore } from './lmdb-store.js';
import type { LogView } from './log-view.js';
import { leafHash } from './merkle.js';
import { openMerkleTree, type MerkleTree } from './merkle-tree.js';
import { decodeRecord, hashBytes } from './record.js';
import { CARRIED_DB, openCarriedIndex, type CarriedIndex } from './retention/carried.js';
import { GENESIS_HASH, type LogRecord } from '../kernel/record.js';

/**
 * A retention cut removed records that a snapshot was about to read (it began after the snapshot
 * was opened): what was read so far stands, the rest is in the cut's archive. A verification starts
 * again on a fresh snapshot (`retryOnCut`); an export cannot take back what it wrote, and fails.
 */
export class CutDuringReadError extends Error {
  override readonly name = 'CutDuringReadError';
  constructor(
    readonly seq: number,
    readonly firstSeq: number,
  ) {
    super(
      `a retention cut removed records ${seq} to ${firstSeq - 1} while they were being read ` +
        `(they are in the cut's archive): run the command again`,
    );
  }
}

/** A store that cannot be read as a snapshot (none there, no log, a tree never completed). */
export class SnapshotError extends Error {
  override readonly name = 'SnapshotError';
}

/**
 * Runs `verify` (which opens a snapshot of its own) again when a retention cut removed records it
 * had still to read, up to `attempts` times: cuts come minutes apart, so a second run all but
 * always reads its whole log before the next one.
 */
export async function retryOnCut<T>(verify: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await verify();
    } catch (err) {
      if (!(err instanceof CutDuringReadError) || attempt >= attempts) throw err;
    }
  }
}

/**
 * A read-only view of a store that another process may be serving: the log bounded at the head
 * read when it was opened (with the cut, the tree's size and the checkpoints read in the same LMDB
 * snapshot), read a slice at a time so that no read snapshot is held for long.
 */
export interface StoreSnapshot {
  readonly path: string;
  /** The log as of the head read at open; reads past it see nothing. */
  readonly log: LogView;
  /** The store's databases, read only (one the store does not have reads as empty). */
  readonly store: Pick<LmdbStore, 'db'>;
  /** Records carried forward by retention, by original seq. */
  readonly carried: CarriedIndex;
  /** The stored checkpoints of sizes up to the bound, as they were at open, by size. */
  readonly checkpoints: ReadonlyArray<readonly [number, string]>;
  close(): Promise<void>;
}

/** Records read under one LMDB read snapshot at most, and the longest time one is held. */
const SLICE_RECORDS = 1024;
const SLICE_MS = 250;

/**
 * Opens the store at `path` for reading beside the process that serves it: no pid lock is taken
 * and nothing is written (LMDB's reader table in `lock.mdb` aside). Outside that process the
 * environment is opened read only and this process is marked as an auditor
 * (src/log/auditor-marks.ts), so a `vigil serve` starting meanwhile does not take it for a second
 * writer. `inProcess` is for a worker thread of the serving process itself: the environment is
 * the writer's own there (lmdb-js shares it within a process), and no mark is needed.
 */
export function openStoreSnapshot(path: string, opts: { inProcess?: boolean } = {}): StoreSnapshot {
  if (!existsSync(join(path, 'data.mdb'))) throw new SnapshotError(`there is no store at ${path}`);
  const unmark = opts.inProcess ? () => undefined : markAuditor(path);
  let root: RootDatabase | undefined;
  try {
    root = open({ path, maxDbs: 64, compression: false, cache: false, readOnly: !opts.inProcess });
    return snapshotOf(path, root, unmark);
  } catch (err) {
    void root?.close().catch(() => undefined);
    unmark();
    throw err;
  }
}

/** The database stand-in for one the store does not have (a store never checkpointed has no `checkpoints`). */
const EMPTY_DB = {
  get: () => undefined,
  getRange: () => [],
  getKeys: () => [],
  getKeysCount: () => 0,
  doesExist: () => false,
} as unknown as Database;

/** The carried index of a store that never had a retention cut. */
const NOTHING_CARRIED: CarriedIndex = {
  get: () => undefined,
  all: () => [],
  write: () => {
    throw new Error('a store snapshot is read only');
  },
};

/** The store's databases by name, opened once each; one the store does not have reads as empty. */
function databasesOf(root: RootDatabase, names: ReadonlySet<string>): LmdbStore['db'] {
  const handles = new Map<string, Database>();
  return ((name: string, options?: Parameters<LmdbStore['db']>[1]) => {
    const key = `${name}\0${options?.encoding ?? ''}\0${options?.keyEncoding ?? ''}`;
    let h = handles.get(key);
    if (!h) {
      const { encoding = 'msgpack', keyEncoding } = options ?? {};
      h = names.has(name) ? root.openDB({ name, encoding, keyEncoding, cache: false }) : EMPTY_DB;
      handles.set(key, h);
    }
    return h;
  }) as LmdbStore['db'];
}

/** What a snapshot reads at open, in one LMDB read snapshot: its bound (the head), the cut, checkpoints, tree. */
interface Bound {
  readonly head: LogHead;
  readonly cut: LogCut | undefined;
  readonly checkpoints: ReadonlyArray<readonly [number, string]>;
  readonly tree: MerkleTree;
  /** The signed head, written in the same transaction as the head. */
  readonly signedHead: string | undefined;
}

function readBound(path: string, root: RootDatabase, db: LmdbStore['db']): Bound {
  const records = db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
  const meta = db<LogHead | LogCut, string>('log-meta');
  const checkpointsDb = db<string, number>('checkpoints', { keyEncoding: 'uint32' });
  // The tree's databases and the leaf reader are opened first: opening a database read only renews
  // the read snapshot, and what follows must be read in one.
  db('merkle', { encoding: 'binary' });
  const treeMeta = db<number, string>('merkle-meta');
  const leaves = lentReader(root, 'log', leafHash);
  // One LMDB read snapshot from here to the tree's open: the head, the cut, the tree's size and
  // the checkpoints agree (lmdb-js keeps a read transaction until the event loop turns or it is reset).
  const head = headOf(records, meta);
  const cut = meta.get('cut') as LogCut | undefined;
  const signedHead = (meta as unknown as Database<string, string>).get(SIGNED_HEAD);
  const treeSize = treeMeta.get('size') ?? 0;
  if (treeSize < head.seq)
    throw new SnapshotError(
      `the store's Merkle tree covers ${treeSize} of its ${head.seq} records: start \`vigil serve\` once ` +
        `(it completes the tree) and verify again`,
    );
  const checkpoints: Array<readonly [number, string]> = [];
  for (const { key, value } of checkpointsDb.getRange({ end: head.seq + 1 })) checkpoints.push([key, value]);
  const tree = openMerkleTree({ path, root, db, close: () => Promise.resolve() }, leaves, head.seq);
  return { head, cut, checkpoints, tree, signedHead };
}

/** The log as of `bound`: reads stop at its head, each a slice at a time (`slicedRange`). */
function boundedLog(root: RootDatabase, db: LmdbStore['db'], bound: Bound): LogView {
  const { head, cut, tree } = bound;
  const records = db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
  const meta = db<LogHead | LogCut, string>('log-meta');
  const first = cut?.firstSeq ?? 1;
  const readRaw = (from: number, to = head.seq) =>
    slicedRange(root, records, meta, Math.max(from, first), Math.min(to, head.seq));
  function* read(from: number, to?: number): Iterable<LogRecord> {
    for (const { bytes } of readRaw(from, to)) yield decodeRecord(bytes);
  }
  return {
    head: () => head,
    first: () => first,
    cut: () => cut,
    signedHead: () => bound.signedHead,
    readRaw,
    read,
    // The stored tree is ahead of the bound once the writer commits: it is read at the bound only.
    tree: {
      size: () => head.seq,
      root: (size = head.seq) => tree.root(size),
      frontierAt: (size) => tree.frontierAt(size),
    },
  };
}

function snapshotOf(path: string, root: RootDatabase, unmark: () => void): StoreSnapshot {
  const names = new Set(root.getKeys({}) as Iterable<string>);
  if (!names.has('log')) throw new SnapshotError(`the store at ${path} holds no log`);
  const db = databasesOf(root, names);
  const bound = readBound(path, root, db);
  const log = boundedLog(root, db, bound);
  const carried = names.has(CARRIED_DB)
    ? openCarriedIndex(root, (seq) => {
        for (const r of log.read(seq, seq)) return r;
        return undefined;
      })
    : NOTHING_CARRIED;
  root.resetReadTxn();
  let closed = false;
  return {
    path,
    log,
    store: { db },
    carried,
    checkpoints: bound.checkpoints,
    async close() {
      if (closed) return;
      closed = true;
      await root.close();
      unmark();
    },
  };
}

/** The log's head as recorded with its records (or, in a store that never recorded one, its last record). */
function headOf(records: Database<Uint8Array, number>, meta: Database<LogHead | LogCut, string>): LogHead {
  const stored = meta.get('head') as LogHead | undefined;
  if (stored) return stored;
  for (const { key, value } of records.getRange({ reverse: true, limit: 1 }))
    return { seq: key, hash: hashBytes(value) };
  return { seq: 0, hash: GENESIS_HASH };
}

/**
 * Records `from`..`to` with their stored bytes, under a fresh LMDB read snapshot every
 * SLICE_RECORDS records or SLICE_MS: a snapshot held for a whole walk (minutes for a large log)
 * keeps the writer from reusing the pages it frees meanwhile, and its file grows. Records below the
 * bound never change in an append-only log, except by a retention cut, which removes a prefix:
 * each slice first checks that none removed the next record to read (`CutDuringReadError`).
 */
function* slicedRange(
  root: RootDatabase,
  records: Database<Uint8Array, number>,
  meta: Database<LogHead | LogCut, string>,
  from: number,
  to: number,
): Iterable<{ seq: number; bytes: Uint8Array }> {
  let next = from;
  while (next <= to) {
    root.resetReadTxn();
    const cutNow = meta.get('cut') as LogCut | undefined;
    if (cutNow && cutNow.firstSeq > next) throw new CutDuringReadError(next, cutNow.firstSeq);
    const started = performance.now();
    let n = 0;
    const start = next;
    for (const { key, value } of records.getRange({ start, end: to + 1 })) {
      yield { seq: key, bytes: value };
      next = key + 1;
      if (++n >= SLICE_RECORDS || performance.now() - started >= SLICE_MS) break;
    }
    // Nothing more up to the bound (the rest is missing, and the reader says so).
    if (n === 0) return;
  }
}
