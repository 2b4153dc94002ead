import { asAuthorityRecord, asInstanceRecord } from '../events/read.js';
import type { AuthorityRecord, InstanceRecord } from '../events/union.js';
import type { LogRecord } from '../kernel/record.js';

/**
 * A read model kept in memory: a pure fold of the log. Its state is checkpointed (with the last
 * applied seq) so a restart folds only the tail; bumping `version` rebuilds it from record 1.
 */
export interface Projection<S> {
  readonly name: string;
  readonly version: number;
  initial(): S;
  /** Pure: the next state for one record. May mutate and return `state` (it is owned by the fold). */
  evolve(state: S, record: LogRecord): S;
  /** Plain, msgpack-safe data for the checkpoint (defaults to the state itself). */
  snapshot?(state: S): unknown;
  /** The state back from a checkpoint. */
  restore?(data: unknown): S;
}

/** Writes an index projection makes; applied inside the log's transaction. */
export interface IndexWriter {
  put(db: string, key: IndexKey, value: unknown): void;
  remove(db: string, key: IndexKey): void;
}

/** Reads an index projection makes while applying a record (sees writes not yet committed). */
export interface IndexReader {
  get(db: string, key: IndexKey): unknown;
}

/** A key in an index database: a string, number or array of them (ordered-binary). */
export type IndexKey = string | number | Array<string | number>;

/**
 * A read model kept in LMDB databases (too large for the heap, such as the evidence index).
 * Its writes commit in the same transaction as the records they come from, so it is never
 * behind or ahead of the log; bumping `version` clears and rebuilds it.
 */
export interface IndexProjection {
  readonly name: string;
  readonly version: number;
  readonly dbs: readonly string[];
  /**
   * The databases `apply` (or a decider) reads: writes to these are visible to reads before their
   * transaction commits. Writes to the others are only collected for the transaction.
   */
  readonly readDbs: readonly string[];
  /** Databases whose entries are keys only (value `null`): stored without encoding a value. */
  readonly keyOnlyDbs?: readonly string[];
  /** Databases whose values are bytes the projection encodes itself (`Uint8Array`). */
  readonly binaryDbs?: readonly string[];
  /**
   * Read databases with string keys that are mostly looked up for keys they do not hold (the
   * evidence index by id: every new event's id is). The write side keeps a Bloom filter of their
   * keys in memory (src/projections/key-filter.ts), so such a lookup costs no LMDB read.
   */
  readonly filteredDbs?: readonly string[];
  /** Deterministic: the writes for one record, given what the index holds. */
  apply(record: LogRecord, read: IndexReader, write: IndexWriter): void;
  /**
   * The seq of the record an entry of `db` was written for. With it a retention cut forgets the
   * entries of removed records by a sweep instead of folding the index again (src/projections/read-side/read-fold.ts).
   */
  recordOf?(db: string, key: IndexKey, value: unknown): number;
}

/** A projection written over one service's typed records; `overRecords` makes it a runtime `Projection`. */
export interface RecordProjection<S, R> extends Omit<Projection<S>, 'evolve'> {
  /** Pure: the next state for one typed record (`switch (record.type)` narrows its data). */
  evolve(state: S, record: R): S;
}

/** An index projection written over one service's typed records. */
export interface RecordIndexProjection<R> extends Omit<IndexProjection, 'apply'> {
  apply(record: R, read: IndexReader, write: IndexWriter): void;
}

/**
 * The runtime's view of a typed projection: each decoded record is narrowed by `read` (the one
 * boundary from the log to the union); a record of a type this version does not know changes nothing.
 */
export function overRecords<S, R>(read: (record: LogRecord) => R | undefined, p: RecordProjection<S, R>): Projection<S> {
  const evolve = p.evolve;
  return { ...p, evolve: (state, record) => { const r = read(record); return r === undefined ? state : evolve(state, r); } };
}

/** An instance projection over `InstanceRecord`. */
export function instanceProjection<S>(p: RecordProjection<S, InstanceRecord>): Projection<S> {
  return overRecords(asInstanceRecord, p);
}

/** A setup authority projection over `AuthorityRecord`. */
export function authorityProjection<S>(p: RecordProjection<S, AuthorityRecord>): Projection<S> {
  return overRecords(asAuthorityRecord, p);
}

/** An instance index projection over `InstanceRecord`. */
export function instanceIndex(p: RecordIndexProjection<InstanceRecord>): IndexProjection {
  const apply = p.apply;
  return { ...p, apply: (record, read, write) => { const r = asInstanceRecord(record); if (r !== undefined) apply(r, read, write); } };
}
