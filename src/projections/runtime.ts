import { Packr } from 'msgpackr';
import type { Database } from 'lmdb';
import type { LmdbEventLog } from '../log/lmdb-log.js';
import type { LmdbStore } from '../log/lmdb-store.js';
import type { LogRecord } from '../log/record.js';
import type { IndexKey, IndexProjection, IndexReader, IndexWriter, Projection } from './types.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const EMPTY = new Uint8Array(0);

interface Checkpoint { version: number; seq: number; state: Uint8Array }
interface IndexMeta { version: number; seq: number }
/** One collected write; `token` > 0 when it is also in the read overlay. */
type Op = { db: Database<unknown, IndexKey>; dbName: string; key: IndexKey; value?: unknown; remove?: true; token: number };

/** Read access to every read model, for deciders and queries. */
export interface ReadModels {
  state<S>(name: string): S;
  readonly index: IndexReader;
  /** The LMDB database behind an index projection, for range queries (committed data only). */
  db<V = unknown>(name: string): Database<V, IndexKey>;
  /** The last seq applied to the read models. */
  seq(): number;
  /** A committed log record (queries read event bodies from the log). */
  record(seq: number): LogRecord | undefined;
}

/** The projections of one service, folded live and checkpointed. */
export interface ProjectionRuntime extends ReadModels {
  /** Loads checkpoints and folds the log tail; returns how many records were folded. */
  start(): Promise<number>;
  /** Applies newly staged records; returns the writes to run inside their transaction. */
  apply(records: readonly LogRecord[]): (recs: readonly LogRecord[]) => void;
  /** Forgets overlay entries once their transaction is durable. */
  settle(records: readonly LogRecord[]): void;
  /** Writes every heap projection's state with the current seq. */
  checkpoint(): Promise<void>;
  /** Clears every read model and folds the log from record 1 (to `until` when given). */
  rebuild(until?: number, onProgress?: (seq: number) => void): Promise<number>;
}

/** Options of the runtime. */
export interface RuntimeOptions {
  readonly store: LmdbStore;
  readonly log: LmdbEventLog;
  readonly projections: readonly Projection<unknown>[];
  readonly indexes: readonly IndexProjection[];
  /** Checkpoint heap projections after this many records (default 20,000). */
  readonly checkpointEvery?: number;
}

/** Creates the runtime that keeps every read model in step with the log. */
export function createProjectionRuntime(opts: RuntimeOptions): ProjectionRuntime {
  const { store, log, projections, indexes } = opts;
  const checkpointEvery = opts.checkpointEvery ?? 20_000;
  const checkpoints: Database<Checkpoint, string> = store.db('projection-checkpoints');
  const indexMeta: Database<IndexMeta, string> = store.db('index-meta');
  const dbs = new Map<string, Database<unknown, IndexKey>>();
  const keyOnly = new Set(indexes.flatMap((ix) => ix.keyOnlyDbs ?? []));
  const binary = new Set(indexes.flatMap((ix) => [...(ix.keyOnlyDbs ?? []), ...(ix.binaryDbs ?? [])]));
  for (const ix of indexes) for (const name of ix.dbs) dbs.set(name, store.db(name, binary.has(name) ? { encoding: 'binary' } : undefined) as Database<unknown, IndexKey>);
  const states = new Map<string, unknown>(projections.map((p) => [p.name, p.initial()]));
  const heapSeq = new Map<string, number>(projections.map((p) => [p.name, 0]));
  const overlay = new Map<string, { value: unknown; removed: boolean; token: number }>();
  let token = 0;
  let seq = 0;
  let sinceCheckpoint = 0;

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

  function foldHeap(record: LogRecord): void {
    for (const p of projections) {
      if (record.seq <= heapSeq.get(p.name)!) continue;
      states.set(p.name, p.evolve(states.get(p.name), record));
      heapSeq.set(p.name, record.seq);
    }
  }

  function collect(record: LogRecord, ops: Op[], only?: ReadonlySet<string>): void {
    for (const ix of indexes) {
      if (only && !only.has(ix.name)) continue;
      const writer: IndexWriter = {
        put(db, key, value) {
          let t = 0;
          if (readable.has(db)) overlay.set(overlayKey(db, key), { value, removed: false, token: (t = ++token) });
          ops.push({ db: dbOf(db), dbName: db, key, value: value === null && keyOnly.has(db) ? EMPTY : value, token: t });
        },
        remove(db, key) {
          let t = 0;
          if (readable.has(db)) overlay.set(overlayKey(db, key), { value: undefined, removed: true, token: (t = ++token) });
          ops.push({ db: dbOf(db), dbName: db, key, remove: true, token: t });
        },
      };
      ix.apply(record, reader, writer);
    }
  }

  function writeOps(ops: readonly Op[], lastSeq: number, names: readonly string[]): void {
    for (const op of ops) {
      if (op.remove) op.db.removeSync(op.key as never);
      else op.db.putSync(op.key as never, op.value);
    }
    for (const ix of indexes) if (names.includes(ix.name)) indexMeta.putSync(ix.name, { version: ix.version, seq: lastSeq });
  }

  const pendingOps = new Map<number, Op[]>();
  /** Records applied but not yet durable, readable by deciders through `record(seq)`. */
  const stagedRecords = new Map<number, LogRecord>();
  const allIndexNames = indexes.map((i) => i.name);

  function snapshotAll(): Array<[string, Checkpoint]> {
    return projections.map((p) => {
      const state = states.get(p.name);
      return [p.name, { version: p.version, seq: heapSeq.get(p.name)!, state: packr.pack(p.snapshot ? p.snapshot(state) : state) }];
    });
  }

  const runtime: ProjectionRuntime = {
    index: reader,
    state: <S>(name: string) => {
      if (!states.has(name)) throw new Error(`no projection named ${name}`);
      return states.get(name) as S;
    },
    db: <V>(name: string) => dbOf(name) as unknown as Database<V, IndexKey>,
    seq: () => seq,
    record: (s) => {
      const staged = stagedRecords.get(s);
      if (staged) return staged;
      for (const r of log.read(s, s)) return r;
      return undefined;
    },

    async start() {
      for (const p of projections) {
        const cp = checkpoints.get(p.name);
        if (cp && cp.version === p.version && cp.seq <= log.head().seq) {
          const data = packr.unpack(cp.state);
          states.set(p.name, p.restore ? p.restore(data) : data);
          heapSeq.set(p.name, cp.seq);
        }
      }
      // Indexes commit with their records, so one that is not exactly at the head (a version bump,
      // or records appended by another tool) is rebuilt rather than trusted.
      const stale = indexes.filter((ix) => {
        const m = indexMeta.get(ix.name);
        return !m || m.version !== ix.version || m.seq !== log.head().seq;
      });
      if (stale.length > 0) await clearIndexes(stale.map((s) => s.name));
      const from = Math.min(...[...heapSeq.values(), log.head().seq]) + 1;
      const staleNames = new Set(stale.map((s) => s.name));
      const indexFrom = staleNames.size > 0 ? 1 : log.head().seq + 1;
      const folded = await fold(Math.min(from, indexFrom), log.head().seq, staleNames);
      seq = log.head().seq;
      return folded;
    },

    apply(records) {
      const ops: Op[] = [];
      for (const r of records) {
        stagedRecords.set(r.seq, r);
        foldHeap(r);
        collect(r, ops);
        seq = r.seq;
      }
      const last = records.at(-1)?.seq;
      if (last !== undefined) pendingOps.set(last, ops);
      sinceCheckpoint += records.length;
      if (sinceCheckpoint >= checkpointEvery) {
        sinceCheckpoint = 0;
        void runtime.checkpoint().catch(() => undefined);
      }
      return (recs) => {
        const lastSeq = recs.at(-1)?.seq;
        if (lastSeq === undefined) return;
        const mine = pendingOps.get(lastSeq);
        // The writes are collected right after staging; running before that would lose them.
        if (!mine) throw new Error(`read-model writes for seq ${lastSeq} were not collected`);
        writeOps(mine, lastSeq, allIndexNames);
      };
    },

    settle(records) {
      const last = records.at(-1)?.seq;
      if (last === undefined) return;
      for (const op of pendingOps.get(last) ?? []) {
        if (op.token === 0) continue;
        const k = overlayKey(op.dbName, op.key);
        if (overlay.get(k)?.token === op.token) overlay.delete(k);
      }
      pendingOps.delete(last);
      for (const r of records) stagedRecords.delete(r.seq);
    },

    async checkpoint() {
      const snap = snapshotAll();
      await log.commit(() => { for (const [name, cp] of snap) checkpoints.putSync(name, cp); });
    },

    async rebuild(until, onProgress) {
      for (const p of projections) { states.set(p.name, p.initial()); heapSeq.set(p.name, 0); }
      await clearIndexes(allIndexNames);
      const to = until ?? log.head().seq;
      const n = await fold(1, to, new Set(allIndexNames), onProgress);
      seq = to;
      if (until === undefined) await runtime.checkpoint();
      return n;
    },
  };

  async function clearIndexes(names: readonly string[]): Promise<void> {
    await log.commit(() => {
      for (const ix of indexes) {
        if (!names.includes(ix.name)) continue;
        for (const name of ix.dbs) dbOf(name).clearSync();
        indexMeta.removeSync(ix.name);
      }
    });
  }

  /** Folds records [from, to] into heap projections behind them and into the named indexes, in chunks. */
  async function fold(from: number, to: number, indexNames: ReadonlySet<string>, onProgress?: (seq: number) => void): Promise<number> {
    let count = 0;
    let ops: Op[] = [];
    let chunkLast = 0;
    const flush = async () => {
      const batch = ops;
      const last = chunkLast;
      ops = [];
      if (indexNames.size > 0) await log.commit(() => writeOps(batch, last, [...indexNames]));
      overlay.clear();
      onProgress?.(last);
    };
    for (const record of log.read(from, to)) {
      foldHeap(record);
      if (indexNames.size > 0) collect(record, ops, indexNames);
      chunkLast = record.seq;
      count++;
      if (ops.length >= 50_000 || count % 20_000 === 0) await flush();
    }
    if (chunkLast > 0) await flush();
    return count;
  }

  return runtime;
}
