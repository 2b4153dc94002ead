import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { Packr } from 'msgpackr';
import { decodeBounded } from './bounded-msgpack.js';
import type { LogRecord } from '../kernel/record.js';

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
  const plain: Record<string, unknown> = {
    seq: record.seq,
    at: record.at,
    type: record.type,
    data: record.data,
    prev: record.prev,
  };
  if (record.actor) plain.actor = record.actor;
  return (carriesEvents(record.data) ? evidencePackr : packr).pack(plain);
}

/**
 * msgpackr reads a map key `__proto__` back as `__proto_` (so decoding cannot set a prototype), but
 * the key is client data that JSON.parse keeps as an own property and the log stores as sent: read
 * that way, a stored event differs from the one acknowledged and `sameEvent` refuses its retry. A
 * record whose bytes hold the string `__proto__` (msgpackr writes it as a fixstr: 0xa9 and its nine
 * bytes; a string value `__proto__` costs only this slower read) is read with maps as Maps and
 * rebuilt with the key as an own property, which sets no prototype. Every value is otherwise
 * msgpackr's own. Looking for the string takes about 3 µs in a record of 1,000 events (decoding it,
 * about 5 ms): the header byte is rare, so the search skips through the bytes.
 */
const PROTO_KEY = Buffer.from([0xa9, ...Buffer.from('__proto__', 'latin1')]);
const mapsPackr = new Packr({ ...PACK_OPTIONS, mapsAsObjects: false });

function holdsProtoKey(bytes: Uint8Array): boolean {
  return (
    (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)).indexOf(
      PROTO_KEY,
    ) !== -1
  );
}

/** msgpackr's key of a map read as an object (its `asSafeString`). */
function keyOf(k: unknown): string {
  if (typeof k === 'string') return k;
  if (typeof k === 'number' || typeof k === 'boolean' || typeof k === 'bigint' || k == null) return String(k);
  throw new Error(`Invalid property type for record: ${typeof k}`);
}

/** `value` with every Map made a plain object whose keys, `__proto__` too, are own properties. */
function objectsOf(value: unknown): unknown {
  if (value instanceof Map) {
    const o: Record<string, unknown> = {};
    for (const [k, v] of value)
      Object.defineProperty(o, keyOf(k), { value: objectsOf(v), enumerable: true, writable: true, configurable: true });
    return o;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = objectsOf(value[i]);
  }
  return value;
}

/**
 * Decodes msgpack bytes as msgpackr does with maps as objects, except that a `__proto__` key stays
 * the own key it was written as (see above). For every map-as-object decode of bytes that may hold
 * client keys: log records, and heap models' checkpoints.
 */
export function unpackKeepingKeys(bytes: Uint8Array): unknown {
  return holdsProtoKey(bytes) ? objectsOf(mapsPackr.unpack(bytes)) : packr.unpack(bytes);
}

/**
 * Decodes stored bytes back into a record. msgpackr recurses; a record nested deeper than it can
 * follow (written before the edge bounded nesting) is decoded iteratively instead, with what lies
 * past the nesting bound replaced by a marker, so no record can take a read or a replay down.
 */
export function decodeRecord<D = unknown>(bytes: Uint8Array): LogRecord<D> {
  try {
    return unpackKeepingKeys(bytes) as LogRecord<D>;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return decodeBounded(bytes) as LogRecord<D>;
  }
}

/** Records at least this large are kept as their bytes while their batch is on its way to disk (`keptRecord`). */
const KEPT_AS_BYTES = 16 * 1024;

/**
 * `record` as what holds it until its batch is durable keeps it (the log's transaction and
 * followers, the write side's staged records, the writer's outcome): a large record's `data` is
 * read back from its stored `bytes` when first asked for, not held as the objects it was staged
 * with. Those objects (a batch's parsed events) would otherwise stay reachable for as long as the
 * commit takes, and V8 promotes what lives that long to its old space, onto fresh pages each time
 * (docs/benchmarks.md, 2026-12-01). What reads a kept record's data (a retry found among staged
 * records) decodes it once.
 */
export function keptRecord(record: LogRecord, bytes: Uint8Array): LogRecord {
  if (bytes.byteLength < KEPT_AS_BYTES) return record;
  let data: unknown;
  let decoded = false;
  return {
    seq: record.seq,
    at: record.at,
    type: record.type,
    ...(record.actor ? { actor: record.actor } : {}),
    prev: record.prev,
    get data() {
      if (!decoded) {
        data = decodeRecord(bytes).data;
        decoded = true;
      }
      return data;
    },
  };
}

/** SHA-256 hex of a record's stored bytes: the next record's `prev`. */
export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
