import { decodeRecord } from './record.js';
import { type LogRecord } from '../kernel/record.js';
import type { NormalizedEvent, ReadSideEvent, WriteSideEvent } from '../events/normalized-event.js';
import { eventsOfRecord } from '../events/record-types.js';
import { carriedBy } from './retention/plan.js';

/**
 * Decoders of the log's evidence records (`EventsIngested`, `RawRecordsIngested`, and for the read
 * side `CollectorSubmissionAccepted`, whose other data is built whole) to the fields of
 * their events that one side's folds read. Decoding a record of a thousand events whole builds some
 * forty values an event for the folds to read six or eight, and that building, not reading the
 * bytes, is what decoding costs: these read the MessagePack themselves, build those fields and step
 * over the rest. Every other record, and any record they do not read exactly as msgpackr would (a
 * non-ASCII string, an extension, a float32 or 64-bit number among the fields they build, keys in
 * another order, malformed bytes), is decoded whole by `decodeRecord`, so the folds see the same
 * values either way (tests/log/evidence-fields.test.ts).
 *
 * The events of a record decoded here are typed as NormalizedEvents by the record union but hold
 * only the side's fields: only that side's folds, which take `ReadSideEvent` or `WriteSideEvent`
 * and so read no more, may be given its records.
 *
 * The read side's graph keeps events' times and entity keys for as long as it keeps their entities,
 * so `decodeForReadSide` returns those as strings of their own (see `own`), whichever way it decoded
 * the record, and the graph keeps them as they are.
 */

/** Thrown inside this module for bytes it does not read exactly as msgpackr would: the record is then decoded whole. */
const UNREAD = new Error('not read here');

const ascii = (s: string): Uint8Array => Uint8Array.from(s, (c) => c.charCodeAt(0));
const K = {
  seq: ascii('seq'),
  at: ascii('at'),
  type: ascii('type'),
  data: ascii('data'),
  prev: ascii('prev'),
  actor: ascii('actor'),
  events: ascii('events'),
  id: ascii('id'),
  time: ascii('time'),
  class: ascii('class'),
  source: ascii('source'),
  service: ascii('service'),
  category: ascii('category'),
  entityKeys: ascii('entityKeys'),
  attributes: ascii('attributes'),
  sourceEndpoint: ascii('sourceEndpoint'),
  destinationEndpoint: ascii('destinationEndpoint'),
  adapter: ascii('adapter'),
  host: ascii('host'),
  ip: ascii('ip'),
  user: ascii('user'),
  name: ascii('name'),
};

/** The record types whose events are read field by field; every other type is decoded whole. */
const EVIDENCE_TYPES: ReadonlySet<string> = new Set(['EventsIngested', 'RawRecordsIngested']);
/**
 * The read side also reads the events of an accepted signed submission field by field; the rest of
 * its data (the collector, its facts, the result) is built whole, since the graph folds the facts.
 */
const READ_SIDE_TYPES: ReadonlySet<string> = new Set([...EVIDENCE_TYPES, 'CollectorSubmissionAccepted']);
/** The record types whose data is kept besides its events (the others' is stepped over). */
const WHOLE_DATA_TYPES: ReadonlySet<string> = new Set(['CollectorSubmissionAccepted']);

let buf: Buffer = Buffer.alloc(0);
let pos = 0;

/**
 * Decodes a stored record for the read side: an evidence record's events hold ReadSideEvent's
 * fields. The time and entity keys of every event the record holds, and of the records it carries
 * forward, are strings of their own.
 */
export function decodeForReadSide(bytes: Uint8Array): LogRecord {
  return readEvidence(bytes, readSideEvent, READ_SIDE_TYPES) ?? withOwnedKeptStrings(decodeRecord(bytes));
}

/** Decodes a stored record for the write side's folds: an evidence record's events hold WriteSideEvent's fields. */
export function decodeForWriteSide(bytes: Uint8Array): LogRecord {
  return readEvidence(bytes, writeSideEvent, EVIDENCE_TYPES) ?? decodeRecord(bytes);
}

/**
 * A copy of lent bytes (src/log/lent-range.ts) for `decodeRecord`: msgpackr returns a binary value
 * as a view of the bytes it read. This module's own reader builds every value anew.
 */
const copyOf = (bytes: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(bytes);

/** `decodeForReadSide` of bytes lent for the call only: a record decoded whole is decoded from a copy. */
export function decodeLentForReadSide(bytes: Uint8Array): LogRecord {
  return readEvidence(bytes, readSideEvent, READ_SIDE_TYPES) ?? withOwnedKeptStrings(decodeRecord(copyOf(bytes)));
}

/** `decodeForWriteSide` of bytes lent for the call only: a record decoded whole is decoded from a copy. */
export function decodeLentForWriteSide(bytes: Uint8Array): LogRecord {
  return readEvidence(bytes, writeSideEvent, EVIDENCE_TYPES) ?? decodeRecord(copyOf(bytes));
}

/**
 * Where each event of an evidence record (`EventsIngested`, `RawRecordsIngested`, `CollectorSubmissionAccepted`)
 * starts in its bytes, and where the last ends (`offsets[count]`), read without building any value; undefined for
 * any other record, or bytes not read here. A search that needs a few events of a record of thousands decodes those
 * alone: `decodeRecord(bytes.subarray(offsets[i], offsets[i + 1]))` is the event `i` of the record decoded whole.
 */
export function eventOffsets(bytes: Uint8Array): Uint32Array | undefined {
  try {
    return readEventOffsets(bytes);
  } catch {
    return undefined;
  }
}

function readEventOffsets(bytes: Uint8Array): Uint32Array | undefined {
  buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  pos = 0;
  let type: string | undefined;
  for (let n = mapHeader(); n > 0; n--) {
    const len = keyHeader();
    if (len === 4 && eq(K.type)) {
      pos += 4;
      type = string();
      if (!READ_SIDE_TYPES.has(type)) return undefined;
    } else if (len === 4 && eq(K.data)) {
      if (type === undefined) throw UNREAD;
      pos += 4;
      for (let m = mapHeader(); m > 0; m--) {
        const l = keyHeader();
        const events = l === 6 && eq(K.events);
        pos += l;
        if (!events) {
          skip();
          continue;
        }
        const count = arrayHeader();
        const offsets = new Uint32Array(count + 1);
        for (let i = 0; i < count; i++) {
          offsets[i] = pos;
          skip();
        }
        offsets[count] = pos;
        return offsets;
      }
      throw UNREAD;
    } else {
      pos += len;
      skip();
    }
  }
  return undefined;
}

/** The record read field by field, or undefined when it is to be decoded whole. */
function readEvidence(bytes: Uint8Array, event: () => unknown, types: ReadonlySet<string>): LogRecord | undefined {
  try {
    return readEvidenceRecord(bytes, event, types);
  } catch {
    // UNREAD, or bytes out of range: decoded whole, which says what is wrong with bytes that are not MessagePack.
    return undefined;
  }
}

/**
 * A copy of `s` that keeps nothing else alive. msgpackr returns most strings as slices of one
 * longer string (a run of a record's strings it read at once), and V8 keeps a slice of 13
 * characters or more as a view of its parent: kept in the graph, an entity's time would keep every
 * string of its event alive, about as much again as the graph itself. Prepending a character makes
 * a new string, whose slice views only that. (This module's own reader builds every string anew.)
 */
export function own(s: string): string {
  return s.length < 13 ? s : ('_' + s).slice(1);
}

/**
 * `record` (decoded whole by msgpackr) with the strings the graph keeps of its events made their
 * own, and those of the records it carries forward (retention), which the read side folds as the
 * originals they are.
 */
function withOwnedKeptStrings(record: LogRecord): LogRecord {
  ownKeptStrings(record);
  for (const c of carriedBy(record) ?? []) ownKeptStrings(c);
  return record;
}

function ownKeptStrings(record: { readonly type: string; readonly data: unknown }): void {
  for (const e of eventsOfRecord(record) as ReadonlyArray<{ time: unknown; entityKeys: unknown }>) {
    if (typeof e.time === 'string') e.time = own(e.time);
    if (Array.isArray(e.entityKeys))
      e.entityKeys = e.entityKeys.map((k: unknown) => (typeof k === 'string' ? own(k) : k));
  }
}

function readEvidenceRecord(
  bytes: Uint8Array,
  event: () => unknown,
  types: ReadonlySet<string>,
): LogRecord | undefined {
  buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  pos = 0;
  let seq: number | undefined;
  let at: string | undefined;
  let type: string | undefined;
  let prev: string | undefined;
  let actor: unknown;
  let recordData: { events: unknown[] } | undefined;
  for (let n = mapHeader(); n > 0; n--) {
    const len = keyHeader();
    if (len === 3 && eq(K.seq)) {
      pos += 3;
      seq = integer();
    } else if (len === 2 && eq(K.at)) {
      pos += 2;
      at = string();
    } else if (len === 4 && eq(K.type)) {
      pos += 4;
      type = string();
      if (!types.has(type)) return undefined;
    } else if (len === 4 && eq(K.data)) {
      // Written after the type by the log's encoder; in any other order the record is decoded whole.
      if (type === undefined) throw UNREAD;
      pos += 4;
      recordData = data(event, WHOLE_DATA_TYPES.has(type));
    } else if (len === 4 && eq(K.prev)) {
      pos += 4;
      prev = string();
    } else if (len === 5 && eq(K.actor)) {
      pos += 5;
      actor = plain(0);
    } else throw UNREAD;
  }
  if (
    pos !== buf.length ||
    seq === undefined ||
    at === undefined ||
    type === undefined ||
    prev === undefined ||
    recordData === undefined
  )
    throw UNREAD;
  const record: { seq: number; at: string; type: string; data: { events: unknown[] }; prev: string; actor?: unknown } =
    { seq, at, type, data: recordData, prev };
  if (actor !== undefined) record.actor = actor;
  return record as LogRecord;
}

/**
 * An evidence record's data: its `events`, each read by `event`; every other entry built whole
 * when `whole`, else stepped over.
 */
function data(event: () => unknown, whole: boolean): { events: unknown[] } {
  const out: Record<string, unknown> = {};
  let events: unknown[] | undefined;
  for (let n = mapHeader(); n > 0; n--) {
    const at = pos;
    const len = keyHeader();
    if (len === 6 && eq(K.events)) {
      pos += 6;
      const count = arrayHeader();
      events = new Array<unknown>(count);
      for (let i = 0; i < count; i++) events[i] = event();
      out.events = events;
    } else if (whole) {
      pos = at;
      const key = string();
      if (key === '__proto__') throw UNREAD;
      out[key] = plain(0);
    } else {
      pos += len;
      skip();
    }
  }
  if (events === undefined) throw UNREAD;
  return out as { events: unknown[] };
}

function readSideEvent(): ReadSideEvent {
  const e = {
    time: undefined as unknown as string,
    category: undefined as unknown as NormalizedEvent['category'],
    class: undefined as unknown as string,
    source: undefined as unknown as { adapter: string },
    entityKeys: undefined as unknown as string[],
    actor: undefined as Picked | null | undefined,
    sourceEndpoint: undefined as Picked | null | undefined,
    destinationEndpoint: undefined as Picked | null | undefined,
    service: undefined as Picked | null | undefined,
  };
  for (let n = mapHeader(); n > 0; n--) {
    const len = keyHeader();
    switch (len) {
      case 4:
        if (eq(K.time)) {
          pos += 4;
          e.time = string();
          continue;
        }
        break;
      case 5:
        if (eq(K.class)) {
          pos += 5;
          e.class = string();
          continue;
        }
        if (eq(K.actor)) {
          pos += 5;
          e.actor = picked();
          continue;
        }
        break;
      case 6:
        if (eq(K.source)) {
          pos += 6;
          e.source = adapterOnly();
          continue;
        }
        break;
      case 7:
        if (eq(K.service)) {
          pos += 7;
          e.service = picked();
          continue;
        }
        break;
      case 8:
        if (eq(K.category)) {
          pos += 8;
          e.category = string() as NormalizedEvent['category'];
          continue;
        }
        break;
      case 10:
        if (eq(K.entityKeys)) {
          pos += 10;
          e.entityKeys = strings();
          continue;
        }
        break;
      case 14:
        if (eq(K.sourceEndpoint)) {
          pos += 14;
          e.sourceEndpoint = picked();
          continue;
        }
        break;
      case 19:
        if (eq(K.destinationEndpoint)) {
          pos += 19;
          e.destinationEndpoint = picked();
          continue;
        }
        break;
    }
    pos += len;
    skip();
  }
  return e;
}

function writeSideEvent(): WriteSideEvent {
  const e = {
    id: undefined as unknown as string,
    category: undefined as unknown as NormalizedEvent['category'],
    class: undefined as unknown as string,
    time: undefined as unknown as string,
    source: undefined as unknown as NormalizedEvent['source'],
    attributes: undefined as unknown as NormalizedEvent['attributes'],
  };
  for (let n = mapHeader(); n > 0; n--) {
    const len = keyHeader();
    switch (len) {
      case 2:
        if (eq(K.id)) {
          pos += 2;
          e.id = string();
          continue;
        }
        break;
      case 4:
        if (eq(K.time)) {
          pos += 4;
          e.time = string();
          continue;
        }
        break;
      case 5:
        if (eq(K.class)) {
          pos += 5;
          e.class = string();
          continue;
        }
        break;
      case 6:
        if (eq(K.source)) {
          pos += 6;
          e.source = plain(0) as NormalizedEvent['source'];
          continue;
        }
        break;
      case 8:
        if (eq(K.category)) {
          pos += 8;
          e.category = string() as NormalizedEvent['category'];
          continue;
        }
        break;
      case 10:
        if (eq(K.attributes)) {
          pos += 10;
          e.attributes = plain(0) as NormalizedEvent['attributes'];
          continue;
        }
        break;
    }
    pos += len;
    skip();
  }
  return e;
}

/** An event's source, of which the read side reads only the adapter. */
function adapterOnly(): { adapter: string } {
  let adapter: string | undefined;
  for (let n = mapHeader(); n > 0; n--) {
    const len = keyHeader();
    if (len === 7 && eq(K.adapter)) {
      pos += 7;
      adapter = string();
    } else {
      pos += len;
      skip();
    }
  }
  return { adapter: adapter as string };
}

/**
 * An endpoint, actor or service as the graph reads it: `host`, `ip`, `user` and `name` when they
 * are strings or numbers (`str` in src/projections/graph-relationships.ts), absent when they are anything else.
 */
type Picked = Record<string, unknown>;

function picked(): Picked | null {
  if (buf[pos] === 0xc0) {
    pos++;
    return null;
  }
  const o: Picked = {};
  for (let n = mapHeader(); n > 0; n--) {
    const len = keyHeader();
    const field =
      len === 4
        ? eq(K.host)
          ? 'host'
          : eq(K.user)
            ? 'user'
            : eq(K.name)
              ? 'name'
              : undefined
        : len === 2 && eq(K.ip)
          ? 'ip'
          : undefined;
    pos += len;
    if (field === undefined) {
      skip();
      continue;
    }
    const b = buf[pos]!;
    if (isString(b)) o[field] = string();
    else if (isContainerOrConstant(b)) {
      // Reads as absent to the graph; a repeated key must still replace an earlier one.
      delete o[field];
      skip();
    } else o[field] = number(); // any number msgpackr would read otherwise (float32, 64-bit) is decoded whole
  }
  return o;
}

/** Whether the value at a type byte `b` is a string. */
const isString = (b: number): boolean => (b & 0xe0) === 0xa0 || b === 0xd9 || b === 0xda || b === 0xdb;

/**
 * Whether the value at a type byte `b` is a map, an array, a binary, nil or a boolean: none reads as a string or a
 * number.
 */
const isContainerOrConstant = (b: number): boolean =>
  (b >= 0x80 && b <= 0x9f) ||
  b === 0xc0 ||
  b === 0xc2 ||
  b === 0xc3 ||
  (b >= 0xc4 && b <= 0xc6) ||
  (b >= 0xdc && b <= 0xdf);

function strings(): string[] {
  const n = arrayHeader();
  const out = new Array<string>(n);
  for (let i = 0; i < n; i++) out[i] = string();
  return out;
}

/** Whether the key at `pos` (of the length already read) is `key`. */
function eq(key: Uint8Array): boolean {
  const bytes = buf;
  const at = pos;
  if (at + key.length > bytes.length) throw UNREAD;
  for (let i = 0; i < key.length; i++) if (bytes[at + i] !== key[i]) return false;
  return true;
}

/** A map key's header: its length (the key's bytes follow at `pos`). Only string keys are read here. */
function keyHeader(): number {
  const b = buf[pos]!;
  if ((b & 0xe0) === 0xa0) {
    pos++;
    return b & 0x1f;
  }
  if (b === 0xd9) {
    pos += 2;
    return buf[pos - 1]!;
  }
  throw UNREAD;
}

/** An ASCII string (anything else is decoded whole, by msgpackr's own rules). */
function string(): string {
  const b = buf[pos]!;
  let len: number;
  if ((b & 0xe0) === 0xa0) {
    len = b & 0x1f;
    pos++;
  } else if (b === 0xd9) {
    len = buf[pos + 1]!;
    pos += 2;
  } else if (b === 0xda) {
    len = (buf[pos + 1]! << 8) | buf[pos + 2]!;
    pos += 3;
  } else if (b === 0xdb) {
    len = buf.readUInt32BE(pos + 1);
    pos += 5;
  } else throw UNREAD;
  const end = pos + len;
  const bytes = buf;
  if (end > bytes.length) throw UNREAD;
  let h = len;
  for (let i = pos; i < end; i++) {
    const c = bytes[i]!;
    if (c > 0x7f) throw UNREAD;
    h = (Math.imul(h, 31) + c) | 0;
  }
  if (len > INTERN_MAX) {
    const s = latin1(pos, end);
    pos = end;
    return s;
  }
  // Most of an event's strings repeat from event to event (category, class, adapter, a server's
  // address, a service): a string seen recently is taken again instead of being built anew.
  const slot = h & (INTERNED - 1);
  const seen = internedStrings[slot];
  if (seen !== undefined && internedHashes[slot] === h && seen.length === len && sameAscii(seen, pos)) {
    pos = end;
    return seen;
  }
  const s = latin1(pos, end);
  internedStrings[slot] = s;
  internedHashes[slot] = h;
  pos = end;
  return s;
}

/** Strings up to this many bytes are interned. */
const INTERN_MAX = 64;
/** Slots of the intern table (a power of two): each holds the last string whose hash fell in it. */
const INTERNED = 4096;
const internedStrings = new Array<string | undefined>(INTERNED).fill(undefined);
const internedHashes = new Int32Array(INTERNED);

const latin1 = (start: number, end: number): string =>
  (buf as unknown as { latin1Slice(s: number, e: number): string }).latin1Slice(start, end);

function sameAscii(s: string, at: number): boolean {
  const bytes = buf;
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) !== bytes[at + i]) return false;
  return true;
}

/** A number msgpackr reads the same way: integers of up to 32 bits and float64. */
function number(): number {
  const b = buf[pos]!;
  if (b <= 0x7f) {
    pos++;
    return b;
  }
  if (b >= 0xe0) {
    pos++;
    return b - 0x100;
  }
  let v: number;
  switch (b) {
    case 0xcc:
      v = buf[pos + 1]!;
      pos += 2;
      return v;
    case 0xcd:
      v = buf.readUInt16BE(pos + 1);
      pos += 3;
      return v;
    case 0xce:
      v = buf.readUInt32BE(pos + 1);
      pos += 5;
      return v;
    case 0xd0:
      v = buf.readInt8(pos + 1);
      pos += 2;
      return v;
    case 0xd1:
      v = buf.readInt16BE(pos + 1);
      pos += 3;
      return v;
    case 0xd2:
      v = buf.readInt32BE(pos + 1);
      pos += 5;
      return v;
    case 0xcb:
      v = buf.readDoubleBE(pos + 1);
      pos += 9;
      return v;
    default:
      throw UNREAD;
  }
}

function integer(): number {
  const b = buf[pos]!;
  if (b === 0xcb) throw UNREAD;
  return number();
}

function mapHeader(): number {
  const bytes = buf;
  const b = bytes[pos]!;
  if ((b & 0xf0) === 0x80) {
    pos++;
    return b & 0x0f;
  }
  if (b === 0xde) {
    pos += 3;
    return bytes.readUInt16BE(pos - 2);
  }
  if (b === 0xdf) {
    pos += 5;
    return bytes.readUInt32BE(pos - 4);
  }
  throw UNREAD;
}

/** An array's length, never more than the bytes left (each element takes one at least). */
function arrayHeader(): number {
  const b = buf[pos]!;
  let n: number;
  if ((b & 0xf0) === 0x90) {
    pos++;
    return b & 0x0f;
  }
  if (b === 0xdc) {
    n = buf.readUInt16BE(pos + 1);
    pos += 3;
  } else if (b === 0xdd) {
    n = buf.readUInt32BE(pos + 1);
    pos += 5;
  } else throw UNREAD;
  if (n > buf.length - pos) throw UNREAD;
  return n;
}

/** How deeply `plain` follows maps and arrays (deeper ones are decoded whole, where msgpackr's own bounds apply). */
const PLAIN_DEPTH = 32;

/** A plain value, built whole: maps, arrays, ASCII strings, numbers, nil and booleans. */
function plain(depth: number): unknown {
  if (depth > PLAIN_DEPTH) throw UNREAD;
  const b = buf[pos]!;
  if ((b & 0xf0) === 0x80 || b === 0xde || b === 0xdf) {
    const o: Record<string, unknown> = {};
    for (let n = mapHeader(); n > 0; n--) {
      const k = string();
      if (k === '__proto__') throw UNREAD;
      o[k] = plain(depth + 1);
    }
    return o;
  }
  if ((b & 0xf0) === 0x90 || b === 0xdc || b === 0xdd) {
    const a: unknown[] = [];
    for (let n = arrayHeader(); n > 0; n--) a.push(plain(depth + 1));
    return a;
  }
  if (b === 0xc0) {
    pos++;
    return null;
  }
  if (b === 0xc2 || b === 0xc3) {
    pos++;
    return b === 0xc3;
  }
  if (isString(b)) return string();
  return number();
}

/** Steps over one value of any kind, however deeply nested (iteratively: nothing here recurses). */
function skip(): void {
  const bytes = buf;
  let p = pos;
  let pending = 1;
  while (pending > 0) {
    pending--;
    if (p >= bytes.length) throw UNREAD;
    const b = bytes[p]!;
    if (b <= 0x7f || b >= 0xe0) {
      p++;
      continue;
    }
    if (b <= 0x8f) {
      p++;
      pending += 2 * (b & 0x0f);
      continue;
    }
    if (b <= 0x9f) {
      p++;
      pending += b & 0x0f;
      continue;
    }
    if (b <= 0xbf) {
      p += 1 + (b & 0x1f);
      continue;
    }
    switch (b) {
      case 0xc0:
      case 0xc2:
      case 0xc3:
        p += 1;
        break;
      case 0xc4:
      case 0xd9:
        p += 2 + bytes[p + 1]!;
        break;
      case 0xc5:
      case 0xda:
        p += 3 + bytes.readUInt16BE(p + 1);
        break;
      case 0xc6:
      case 0xdb:
        p += 5 + bytes.readUInt32BE(p + 1);
        break;
      case 0xc7:
        p += 3 + bytes[p + 1]!;
        break;
      case 0xc8:
        p += 4 + bytes.readUInt16BE(p + 1);
        break;
      case 0xc9:
        p += 6 + bytes.readUInt32BE(p + 1);
        break;
      case 0xcc:
      case 0xd0:
        p += 2;
        break;
      case 0xcd:
      case 0xd1:
        p += 3;
        break;
      case 0xca:
      case 0xce:
      case 0xd2:
        p += 5;
        break;
      case 0xcb:
      case 0xcf:
      case 0xd3:
        p += 9;
        break;
      case 0xd4:
        p += 3;
        break;
      case 0xd5:
        p += 4;
        break;
      case 0xd6:
        p += 6;
        break;
      case 0xd7:
        p += 10;
        break;
      case 0xd8:
        p += 18;
        break;
      case 0xdc:
        pending += bytes.readUInt16BE(p + 1);
        p += 3;
        break;
      case 0xdd:
        pending += bytes.readUInt32BE(p + 1);
        p += 5;
        break;
      case 0xde:
        pending += 2 * bytes.readUInt16BE(p + 1);
        p += 3;
        break;
      case 0xdf:
        pending += 2 * bytes.readUInt32BE(p + 1);
        p += 5;
        break;
      default:
        throw UNREAD; // 0xc1 is never used
    }
  }
  if (p > bytes.length) throw UNREAD;
  pos = p;
}
