/** Who caused a record: the authenticated principal and how it authenticated. */
export interface Actor {
  readonly id: string;
  readonly authentication: string;
}

/** A record to append: the log assigns `seq` and the chain link. */
export interface NewRecord {
  readonly type: string;
  readonly at: string;
  readonly actor?: Actor;
  readonly data: unknown;
}

/** A record as stored: dense `seq` from 1, `prev` = SHA-256 hex of the previous record's bytes. */
export interface LogRecord<D = unknown> {
  readonly seq: number;
  readonly at: string;
  readonly type: string;
  readonly actor?: Actor;
  readonly data: D;
  readonly prev: string;
}

/** The chain link of the (non-existent) record 0. */
export const GENESIS_HASH = '0'.repeat(64);
