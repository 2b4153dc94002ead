import { asAuthorityRecord, asInstanceRecord } from '../events/read.js';
import {
  INSTANCE_EVENTS,
  type AuthorityEventType,
  type AuthorityRecord,
  type InstanceEventType,
  type InstanceRecord,
} from '../events/union.js';
import { LEGACY_READ_AS } from '../events/upcast.js';
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
  /**
   * The stored record types `evolve` folds (a legacy type read as a folded one included): a record
   * of any other type returns the state as it is. Absent: any record may change it.
   */
  readonly folds?: ReadonlySet<string>;
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
  /** The stored record types `apply` writes for (as `Projection.folds`): a record of any other type writes nothing. */
  readonly folds?: ReadonlySet<string>;
  /**
   * The seq of the record an entry of `db` was written for. With it a retention cut forgets the
   * entries of removed records by a sweep instead of folding the index again
   * (src/projections/read-side/read-expiry.ts).
   */
  recordOf?(db: string, key: IndexKey, value: unknown): number;
}

/** The record of union `R` whose type is one of `T`: what a projection that folds `T` is given. */
export type FoldedRecord<R extends { readonly type: string }, T extends R['type']> = Extract<R, { readonly type: T }>;

/**
 * A projection written over one service's typed records: it names the types it `folds`, and
 * `evolve` is given only records of those (`switch (record.type)` narrows their data and ends in
 * `default: return exhaustive(record, s)`, so a folded type without its case does not compile). A
 * record of any other type leaves the state as it is, without a call: a new event type changes
 * only the projections that fold it. `overRecords` makes it a runtime `Projection`.
 */
export interface RecordProjection<S, R extends { readonly type: string }, T extends R['type'] = R['type']> extends Omit<
  Projection<S>,
  'evolve' | 'folds'
> {
  /**
   * The event types `evolve` is given (tests/projections/folds.test.ts checks each projection's against its service's).
   */
  readonly folds: readonly T[];
  /** Pure: the next state for one record of a folded type. May mutate and return `state`. */
  evolve(state: S, record: FoldedRecord<R, T>): S;
}

/**
 * An index projection written over one service's typed records: it names the types it `folds`, and `apply` is given
 * only those.
 */
export interface RecordIndexProjection<
  R extends { readonly type: string },
  T extends R['type'] = R['type'],
> extends Omit<IndexProjection, 'apply' | 'folds'> {
  /** The event types `apply` is given. */
  readonly folds: readonly T[];
  apply(record: FoldedRecord<R, T>, read: IndexReader, write: IndexWriter): void;
}

/**
 * Every instance event type as projections see them (legacy types are read as their successors): what a projection that
 * counts every record folds.
 */
export const INSTANCE_EVENT_TYPES: readonly InstanceEventType[] = (
  Object.keys(INSTANCE_EVENTS) as Array<keyof typeof INSTANCE_EVENTS>
).filter((t): t is InstanceEventType => !Object.hasOwn(LEGACY_READ_AS, t));

/**
 * The stored instance types whose records are read as one of `folds`: the folded types and the legacy ones read as
 * them.
 */
function storedInstanceTypes(folds: readonly InstanceEventType[]): ReadonlySet<string> {
  const types = new Set<string>(folds);
  for (const [legacy, as] of Object.entries(LEGACY_READ_AS)) if (types.has(as)) types.add(legacy);
  return types;
}

/**
 * The runtime's view of a typed projection. A record whose stored type is not in `folds` returns
 * the state at once (one set lookup, before the record is read); any other is narrowed by `read`
 * (the one boundary from the log to the union) and folded. `folds` holds the stored type names.
 */
export function overRecords<S, R extends { readonly type: string }, T extends R['type']>(
  read: (record: LogRecord) => R | undefined,
  folds: ReadonlySet<string>,
  p: RecordProjection<S, R, T>,
): Projection<S> {
  const { evolve, folds: _typed, ...rest } = p;
  return {
    ...rest,
    folds,
    evolve: (state, record) => {
      if (!folds.has(record.type)) return state;
      const r = read(record);
      // `read` gives a record of a type in `folds` (or of the type a legacy one in it is read as): a folded type.
      return r === undefined ? state : evolve(state, r as FoldedRecord<R, T>);
    },
  };
}

/** An instance projection over the `InstanceRecord`s of the types it folds. */
export function instanceProjection<S, const T extends InstanceEventType>(
  p: RecordProjection<S, InstanceRecord, T>,
): Projection<S> {
  return overRecords(asInstanceRecord, storedInstanceTypes(p.folds), p);
}

/** A setup authority projection over the `AuthorityRecord`s of the types it folds. */
export function authorityProjection<S, const T extends AuthorityEventType>(
  p: RecordProjection<S, AuthorityRecord, T>,
): Projection<S> {
  return overRecords(asAuthorityRecord, new Set<string>(p.folds), p);
}

/**
 * An instance index projection over the `InstanceRecord`s of the types it folds (a record of another type writes
 * nothing, as in `overRecords`).
 */
export function instanceIndex<const T extends InstanceEventType>(
  p: RecordIndexProjection<InstanceRecord, T>,
): IndexProjection {
  const { apply, folds: _typed, ...rest } = p;
  const folds = storedInstanceTypes(p.folds);
  return {
    ...rest,
    folds,
    apply: (record, read, write) => {
      if (!folds.has(record.type)) return;
      const r = asInstanceRecord(record);
      if (r !== undefined) apply(r as FoldedRecord<InstanceRecord, T>, read, write);
    },
  };
}
