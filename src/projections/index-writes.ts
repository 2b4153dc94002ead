import type { Database } from 'lmdb';
import type { LmdbStore } from '../log/lmdb-store.js';
import type { LogRecord } from '../kernel/record.js';
import { createKeyFilter, type KeyFilter } from './key-filter.js';
import type { IndexKey, IndexProjection, IndexReader, IndexWriter } from './types.js';

const EMPTY = new Uint8Array(0);

/** The fewest keys a filter of a filtered database is sized for (2 MiB of bits). */
const FILTER_CAPACITY = 1 << 20;

/** The version and last applied seq of one index projection. */
export interface IndexMeta {
  version: number;
  seq: number;
}
/** One collected write; `token` > 0 when it is also in the read overlay. */
export type Op = {
  db: Database<unknown, IndexKey>;
  dbName: string;
  key: IndexKey;
  value?: unknown;
  remove?: true;
  token: number;
};

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
  /** Whether a filter of a filtered database is still being filled from the database (see `warmStep`). */
  warming(): boolean;
  /**
   * Fills the filters being built from their databases' keys for at most `budgetMs`; a filter
   * replaces the one in use (or none, after opening) once every key is in it. Returns whether none
   * is left to fill.
   */
  warmStep(budgetMs: number): boolean;
}

/**
 * The filter of a filtered database (IndexProjection.filteredDbs). `current` holds every key the
 * database holds; until it exists (right after opening a database that has keys) every read goes
 * to LMDB. `next`, when present, is a larger filter being filled: every key put since it began and
 * the database's keys scanned so far, from `from` on.
 */
interface FilterState {
  current: KeyFilter | undefined;
  next: { filter: KeyFilter; from: string | undefined } | undefined;
}

/**
 * Opens the index databases of `indexes` in `store`. `filterCapacity` (tests) is the fewest keys a
 * filter is sized for.
 */
export function createIndexWrites(
  store: LmdbStore,
  indexes: readonly IndexProjection[],
  opts: { filterCapacity?: number } = {},
): IndexWrites {
  const indexMeta: Database<IndexMeta, string> = store.db('index-meta');
  const dbs = new Map<string, Database<unknown, IndexKey>>();
  const keyOnly = new Set(indexes.flatMap((ix) => ix.keyOnlyDbs ?? []));
  const binary = new Set(indexes.flatMap((ix) => [...(ix.keyOnlyDbs ?? []), ...(ix.binaryDbs ?? [])]));
  for (const ix of indexes)
    for (const name of ix.dbs)
      dbs.set(
        name,
        store.db(name, binary.has(name) ? { encoding: 'binary' } : undefined) as Database<unknown, IndexKey>,
      );
  /** Writes not yet committed, by database and key (`overlayKey`), for the databases reads see. */
  const overlays = new Map<string, Map<string, { value: unknown; removed: boolean; token: number }>>();
  for (const ix of indexes) for (const name of ix.readDbs) overlays.set(name, new Map());
  let token = 0;

  const dbOf = (name: string): Database<unknown, IndexKey> => {
    const db = dbs.get(name);
    if (!db) throw new Error(`no index database named ${name}`);
    return db;
  };
  const overlayKey = (key: IndexKey) => (typeof key === 'string' ? key : JSON.stringify(key));

  const filterCapacity = opts.filterCapacity ?? FILTER_CAPACITY;
  const filters = new Map<string, FilterState>();
  /** A filter of `db` begun now: it holds the writes not yet committed (committed ones its scan finds). */
  const begin = (db: string, capacity: number): FilterState['next'] => {
    const filter = createKeyFilter(capacity);
    for (const key of overlays.get(db)!.keys()) filter.add(key);
    return { filter, from: undefined };
  };
  for (const ix of indexes) {
    for (const name of ix.filteredDbs ?? []) {
      if (!ix.readDbs.includes(name))
        throw new Error(`index ${ix.name}: filtered database ${name} is not one of its readDbs`);
      const held = (dbOf(name).getStats() as { entryCount?: number }).entryCount ?? 0;
      filters.set(
        name,
        held === 0
          ? { current: createKeyFilter(filterCapacity), next: undefined }
          : { current: undefined, next: undefined },
      );
      if (held > 0) filters.get(name)!.next = begin(name, Math.max(filterCapacity, 2 * held));
    }
  }
  /** Records a key put into `db` in its filters; a filter past its capacity begins a larger one. */
  const added = (db: string, key: IndexKey): void => {
    const f = filters.get(db);
    if (f === undefined || typeof key !== 'string') return;
    f.current?.add(key);
    f.next?.filter.add(key);
    if (f.next === undefined && f.current !== undefined && f.current.count >= f.current.capacity)
      f.next = begin(db, 4 * f.current.count);
  };
  /** Whether `db` certainly does not hold `key` (its filter rules it out). */
  const ruledOut = (db: string, key: IndexKey): boolean => {
    if (typeof key !== 'string') return false;
    const current = filters.get(db)?.current;
    return current !== undefined && !current.mayHave(key);
  };

  const reader: IndexReader = {
    get(db, key) {
      const o = overlays.get(db)?.get(overlayKey(key));
      if (o) return o.removed ? undefined : o.value;
      return ruledOut(db, key) ? undefined : dbOf(db).get(key as never);
    },
  };

  /** The value stored for `value` in `db`: a key-only database holds an empty value. */
  const stored = (db: string, value: unknown): unknown => (value === null && keyOnly.has(db) ? EMPTY : value);
  /** Records that the indexes `has` names have folded up to `lastSeq`. */
  const recordFolded = (lastSeq: number, has: (name: string) => boolean): void => {
    for (const ix of indexes) if (has(ix.name)) indexMeta.putSync(ix.name, { version: ix.version, seq: lastSeq });
  };
  const committed: IndexReader = { get: (db, key) => (ruledOut(db, key) ? undefined : dbOf(db).get(key as never)) };
  const direct: IndexWriter = {
    put(db, key, value) {
      dbOf(db).putSync(key as never, stored(db, value));
      added(db, key);
    },
    remove(db, key) {
      dbOf(db).removeSync(key as never);
    },
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
            // Only writes to a database reads see are in the overlay (a token above 0).
            let t = 0;
            overlays.get(db)?.set(overlayKey(key), { value, removed: false, token: (t = ++token) });
            ops.push({ db: dbOf(db), dbName: db, key, value: stored(db, value), token: t });
          },
          remove(db, key) {
            let t = 0;
            overlays.get(db)?.set(overlayKey(key), { value: undefined, removed: true, token: (t = ++token) });
            ops.push({ db: dbOf(db), dbName: db, key, remove: true, token: t });
          },
        };
        ix.apply(record, reader, writer);
      }
    },
    write(ops, lastSeq, names) {
      for (const op of ops) {
        if (op.remove) op.db.removeSync(op.key as never);
        else {
          op.db.putSync(op.key as never, op.value);
          added(op.dbName, op.key);
        }
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
        const overlay = overlays.get(op.dbName)!;
        const k = overlayKey(op.key);
        if (overlay.get(k)?.token === op.token) overlay.delete(k);
      }
    },
    clear(names) {
      for (const ix of indexes) {
        if (!names.includes(ix.name)) continue;
        for (const name of ix.dbs) dbOf(name).clearSync();
        indexMeta.removeSync(ix.name);
        // An empty database: a filter of what is not committed yet holds every key.
        for (const name of ix.filteredDbs ?? [])
          filters.set(name, { current: begin(name, filterCapacity)!.filter, next: undefined });
      }
    },
    warming: () => [...filters.values()].some((f) => f.next !== undefined),
    warmStep(budgetMs) {
      const deadline = performance.now() + budgetMs;
      for (const [name, f] of filters) {
        const next = f.next;
        if (next === undefined) continue;
        let n = 0;
        let done = true;
        // From the last key scanned (again: a filter takes a key twice alike).
        for (const key of dbOf(name).getKeys(next.from === undefined ? {} : { start: next.from })) {
          if (typeof key === 'string') {
            next.filter.add(key);
            next.from = key;
          }
          if (++n % 64 === 0 && performance.now() >= deadline) {
            done = false;
            break;
          }
        }
        if (!done) return false;
        f.current = next.filter;
        f.next = undefined;
      }
      return true;
    },
  };
}
