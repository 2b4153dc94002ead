import type { Database } from 'lmdb';
import type { LmdbStore } from '../log/lmdb-store.js';
import type { LogRecord } from '../log/record.js';
import type { IndexKey, IndexProjection, IndexReader, IndexWriter } from './types.js';

const EMPTY = new Uint8Array(0);

/** The version and last applied seq of one index projection. */
export interface IndexMeta { version: number; seq: number }
/** One collected write; `token` > 0 when it is also in the read overlay. */
export type Op = { db: Database<unknown, IndexKey>; dbName: string; key: IndexKey; value?: unknown; remove?: true; token: number };

/**
 * The write side's LMDB index projections: their databases, the writes a record makes (collected
 * to run inside the record's own transaction), and the overlay that lets the next decision read
 * writes whose transaction has not committed yet.
 */
export interface IndexWrites {
  readonly reader: IndexReader;
  db(name: string): Database<unknown, IndexKey>;
  meta(name: string): IndexMeta | undefined;
  /** The writes of `record` for every index (or only the named ones), appended to `ops`. */
  collect(record: LogRecord, ops: Op[], only?: ReadonlySet<string>): void;
  /** Runs collected writes (inside a transaction) and records `lastSeq` for the named indexes. */
  write(ops: readonly Op[], lastSeq: number, names: readonly string[]): void;
  /**
   * Applies committed `records` to the named indexes straight into their databases and records
   * `lastSeq` for them, inside one write transaction (a fold of the log): reads see the writes of
   * the transaction itself, so no overlay is needed, and nothing is collected.
   */
  applyCommitted(records: readonly LogRecord[], lastSeq: number, names: ReadonlySet<string>): void;
  /** Forgets overlay entries of writes that are now committed. */
  settle(ops: readonly Op[]): void;
  /** Empties the named indexes' databases and meta (inside a transaction). */
  clear(names: readonly string[]): void;
}

/** Opens the index databases of `indexes` in `store`. */
export function createIndexWrites(store: LmdbStore, indexes: readonly IndexProjection[]): IndexWrites {
  const indexMeta: Database<IndexMeta, string> = store.db('index-meta');
  const dbs = new Map<string, Database<unknown, IndexKey>>();
  const keyOnly = new Set(indexes.flatMap((ix) => ix.keyOnlyDbs ?? []));
  const binary = new Set(indexes.flatMap((ix) => [...(ix.keyOnlyDbs ?? []), ...(ix.binaryDbs ?? [])]));
  for (const ix of indexes) for (const name of ix.dbs) dbs.set(name, store.db(name, binary.has(name) ? { encoding: 'binary' } : undefined) as Database<unknown, IndexKey>);
  const overlay = new Map<string, { value: unknown; removed: boolean; token: number }>();
  let token = 0;

  const dbOf = (name: string): Database<unknown, IndexKey> => {
    const db = dbs.get(name);
    if (!db) throw new Error(`no index database named ${name}`);
    return db;
  };
  const readable = new Set(indexes.flatMap((ix) => ix.readDbs));
  const overlayKey = (db: string, key: IndexKey) => `${db}\u0000${typeof key === 'string' ? key : JSON.stringify(key)}`;
  const reader: IndexReader = {
    get(db, key) {
      const o = overlay.get(overlayKey(db, key));
      if (o) return o.removed ? undefined : o.value;
      return dbOf(db).get(key as never);
    },
  };

  /** The value stored for `value` in `db`: a key-only database holds an empty value. */
  const stored = (db: string, value: unknown): unknown => (value === null && keyOnly.has(db) ? EMPTY : value);
  /** Records that the indexes `has` names have folded up to `lastSeq`. */
  const recordFolded = (lastSeq: number, has: (name: string) => boolean): void => {
    for (const ix of indexes) if (has(ix.name)) indexMeta.putSync(ix.name, { version: ix.version, seq: lastSeq });
  };
  const committed: IndexReader = { get: (db, key) => dbOf(db).get(key as never) };
  const direct: IndexWriter = {
    put(db, key, value) { dbOf(db).putSync(key as never, stored(db, value)); },
    remove(db, key) { dbOf(db).removeSync(key as never); },
  };

  return {
    reader,
    db: dbOf,
    meta: (name) => indexMeta.get(name),
    collect(record, ops, only) {
      for (const ix of indexes) {
        if (only && !only.has(ix.name)) continue;
        const writer: IndexWriter = {
          put(db, key, value) {
            let t = 0;
            if (readable.has(db)) overlay.set(overlayKey(db, key), { value, removed: false, token: (t = ++token) });
            ops.push({ db: dbOf(db), dbName: db, key, value: stored(db, value), token: t });
          },
          remove(db, key) {
            let t = 0;
            if (readable.has(db)) overlay.set(overlayKey(db, key), { value: undefined, removed: true, token: (t = ++token) });
            ops.push({ db: dbOf(db), dbName: db, key, remove: true, token: t });
          },
        };
        ix.apply(record, reader, writer);
      }
    },
    write(ops, lastSeq, names) {
      for (const op of ops) {
        if (op.remove) op.db.removeSync(op.key as never);
        else op.db.putSync(op.key as never, op.value);
      }
      recordFolded(lastSeq, (name) => names.includes(name));
    },
    applyCommitted(records, lastSeq, names) {
      const folded = indexes.filter((ix) => names.has(ix.name));
      for (const record of records) for (const ix of folded) ix.apply(record, committed, direct);
      recordFolded(lastSeq, (name) => names.has(name));
    },
    settle(ops) {
      for (const op of ops) {
        if (op.token === 0) continue;
        const k = overlayKey(op.dbName, op.key);
        if (overlay.get(k)?.token === op.token) overlay.delete(k);
      }
    },
    clear(names) {
      for (const ix of indexes) {
        if (!names.includes(ix.name)) continue;
        for (const name of ix.dbs) dbOf(name).clearSync();
        indexMeta.removeSync(ix.name);
      }
    },
  };
}
