import type { DatabaseOptions, RootDatabase } from 'lmdb';

/**
 * Reads a range of a uint32-keyed database without a copy of each value. A range read of a
 * `binary` database (as `LmdbEventLog.readRaw` is) copies every value into a Buffer of its own:
 * about 600 KB for a record of 1,000 events, on pages the process must be given anew, and on this
 * project's 2-core VMs a new page costs 18–21 µs (docs/benchmarks.md). A handle with a decoder of
 * its own instead hands the decoder the value where lmdb-js read it, so a fold that only needs what
 * it decodes (or a hash) takes no copy at all.
 *
 * The bytes `decode` is given are lent for the call: lmdb-js reads the next value into the same
 * memory. `decode` must return nothing that views them (no `subarray`, no Buffer over them); copy
 * what must outlive the call. The memory is lmdb-js's read buffer of the thread, which it grows to
 * twice the largest value read and keeps (a binary read gives a value past 32 KiB a buffer of its
 * own instead): a thread that reads the log this way holds twice its largest record.
 */
export type LentDecode<T> = (bytes: Uint8Array) => T;

/** Reads of one database through a decoder of lent bytes (`lentReader`). */
export interface LentReader<T> {
  /** The values of keys [from, to] in key order, as `decode` made each. */
  range(from: number, to: number): Iterable<{ seq: number; value: T }>;
  /** The value of `key` as `decode` made it; undefined when there is none. */
  get(key: number): T | undefined;
}

/** The encoder lmdb-js takes (`encoder`, which its types do not list). */
interface LentEncoder<T> {
  decode(bytes: Uint8Array): T | undefined;
  encode(value: unknown): never;
}

/** A reader of database `name` (uint32 keys, as the log's) whose values `decode` reads where lmdb-js holds them. */
export function lentReader<T>(root: RootDatabase, name: string, decode: LentDecode<T>): LentReader<T> {
  // A throw inside lmdb-js's read would leave a range's cursor open: the error is kept and thrown
  // by the caller of lmdb-js, which ends the range (and closes the cursor) as any early exit does.
  let failed = false;
  let failure: unknown;
  const rethrow = (): void => {
    if (!failed) return;
    const err = failure;
    failed = false;
    failure = undefined;
    throw err;
  };
  const options: DatabaseOptions & { name: string; encoder: LentEncoder<T> } = {
    name,
    keyEncoding: 'uint32',
    cache: false,
    // lmdb-js reads a value into one buffer it keeps for every read (or views it in the map) and
    // sets that buffer's own `length` to the value's size, which its `byteLength` may exceed. It
    // never writes through this handle, but insists on an encoder with both halves.
    encoder: {
      decode(bytes: Uint8Array): T | undefined {
        try {
          return decode(bytes.subarray(0, bytes.length));
        } catch (err) {
          failed = true;
          failure = err;
          return undefined;
        }
      },
      encode: () => {
        throw new Error(`database ${name} is only read through this handle`);
      },
    },
  };
  const db = root.openDB<T | undefined, number>(options);
  return {
    *range(from, to) {
      for (const { key, value } of db.getRange({ start: Math.max(1, from), end: to + 1 })) {
        rethrow();
        yield { seq: key, value: value as T };
      }
    },
    get(key) {
      const value = db.get(key);
      rethrow();
      return value;
    },
  };
}
