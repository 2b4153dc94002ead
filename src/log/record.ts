import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Packr } from 'msgpackr';
import { decodeBounded } from './bounded-msgpack.js';

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

// Plain maps and arrays only (no msgpackr record extension), so the bytes are self-describing
// and any msgpack implementation can read an exported log.
const PACK_OPTIONS = { useRecords: false, mapsAsObjects: true, variableMapSize: true } as const;
const packr = new Packr(PACK_OPTIONS);

/**
 * The encoder of records that carry a batch of events (most of the log's bytes), from msgpackr's
 * CommonJS build: a second copy of the library's code beside the ES module every other Packr here
 * comes from. V8 keeps type feedback per function, shared by every Packr of one copy; encoding the
 * audit, access and alert records with the same code made it generic, and a batch of 1,000 events
 * then took 4.8 ms to encode instead of 2.0 ms (docs/benchmarks.md). Same package, same options:
 * the bytes are the same (tests/log/record.test.ts).
 */
const cjs = createRequire(import.meta.url)('msgpackr') as typeof import('msgpackr');
const evidencePackr: Packr = new cjs.Packr(PACK_OPTIONS);

/** Whether a record's data carries a batch of events (`{events: [...]}`). */
function carriesEvents(data: unknown): boolean {
  return typeof data === 'object' && data !== null && Array.isArray((data as { events?: unknown }).events);
}

/** Encodes a record to the bytes that are stored and hashed. */
export function encodeRecord(record: LogRecord): Uint8Array {
  const plain: Record<string, unknown> = { seq: record.seq, at: record.at, type: record.type, data: record.data, prev: record.prev };
  if (record.actor) plain.actor = record.actor;
  return (carriesEvents(record.data) ? evidencePackr : packr).pack(plain);
}

/**
 * Decodes stored bytes back into a record. msgpackr recurses; a record nested deeper than it can
 * follow (written before the edge bounded nesting) is decoded iteratively instead, with what lies
 * past the nesting bound replaced by a marker, so no record can take a read or a replay down.
 */
export function decodeRecord<D = unknown>(bytes: Uint8Array): LogRecord<D> {
  try {
    return packr.unpack(bytes) as LogRecord<D>;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return decodeBounded(bytes) as LogRecord<D>;
  }
}

/** SHA-256 hex of a record's stored bytes: the next record's `prev`. */
export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
