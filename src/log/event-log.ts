import type { LogRecord, NewRecord } from '../kernel/record.js';

/** The head of the log: the last record's seq (0 when empty) and its hash. */
export interface LogHead {
  readonly seq: number;
  readonly hash: string;
}

/**
 * Where a log was cut by retention (docs/log.md, "Retention"): records before `firstSeq` were
 * archived and removed; record `firstSeq` links to `prevHash`, and `treeRoot` (base64) is the
 * Merkle root of the first firstSeq − 1 records, whose tree nodes stay.
 */
export interface LogCut {
  readonly firstSeq: number;
  readonly prevHash: string;
  readonly treeRoot: string;
  /** The seq of the last record of the batch that made the cut (set by the log when it stores the cut). */
  readonly atSeq?: number;
}

/**
 * The append-only log. Every backend (LMDB now) passes the same contract suite:
 * batches are atomic, seq is dense from 1, records are chained by hash, and an append
 * resolves only once its records are durable.
 */
export interface EventLog {
  /** Appends a batch atomically; resolves with the stored records once they are durable. */
  append(batch: readonly NewRecord[]): Promise<LogRecord[]>;
  /** Reads records with `from <= seq <= to` (to defaults to the head), in order. */
  read(from: number, to?: number): Iterable<LogRecord>;
  /** Reads the stored bytes of records in a range (for verification and raw benchmarks). */
  readRaw(from: number, to?: number): Iterable<{ seq: number; bytes: Uint8Array }>;
  /** The current head. */
  head(): LogHead;
  /**
   * Calls `onRecord` for each record appended after `from` (including already stored ones); returns a stop function.
   */
  follow(from: number, onRecord: (record: LogRecord) => void): () => void;
  /**
   * Appends `batch` and removes every record before `cut.firstSeq`, atomically (retention; a
   * backend without it keeps everything). Reads then start at `cut.firstSeq`.
   */
  removePrefix?(cut: LogCut, batch: readonly NewRecord[]): Promise<LogRecord[]>;
  /** Flushes and closes; pending appends finish first. */
  close(): Promise<void>;
}

/** A failure of the storage layer after which the outcome of a write is unknown: the process must stop. */
export class FatalStorageError extends Error {
  override readonly name = 'FatalStorageError';
}

/** A write on a node that does not lead (a JetStream follower): nothing was written; retry on the leader. */
export class NotLeaderError extends Error {
  override readonly name = 'NotLeaderError';
}

/** Opening a store that another process holds. */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
}
