/**
 * A Bloom filter of string keys: `mayHave` is false only for a key never added, so a lookup it
 * rules out needs no read of the store. Four probes in a power-of-two bit array of about 12 bits a
 * key at capacity: about 0.7 % of keys never added are still reported as possibly there, and the
 * store is then read as before.
 */
export interface KeyFilter {
  add(key: string): void;
  mayHave(key: string): boolean;
  /** How many keys were added (repeats counted). */
  readonly count: number;
  /** The count up to which the rate above holds. */
  readonly capacity: number;
}

const BITS_PER_KEY = 12;
const PROBES = 4;

/** A filter for `capacity` keys. */
export function createKeyFilter(capacity: number): KeyFilter {
  let bits = 1024;
  while (bits < capacity * BITS_PER_KEY) bits *= 2;
  const words = new Int32Array(bits >>> 5);
  const mask = bits - 1;
  let count = 0;
  // Two FNV-1a hashes of the key's UTF-16 code units with different offsets, combined for each
  // probe (Kirsch and Mitzenmacher: h1 + i * h2 is as good as independent hashes).
  let h1 = 0;
  let h2 = 0;
  const hash = (key: string): void => {
    let a = 0x811c9dc5;
    let b = 0x050c5d1f;
    for (let i = 0; i < key.length; i++) {
      const c = key.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x01000193);
    }
    // A final mix of each, so keys that differ in their last characters spread over every bit.
    a = Math.imul(a ^ (a >>> 15), 0x2c1b3c6d);
    b = Math.imul(b ^ (b >>> 13), 0x297a2d39);
    h1 = a ^ (a >>> 12);
    h2 = (b ^ (b >>> 16)) | 1;
  };
  return {
    add(key) {
      hash(key);
      for (let i = 0; i < PROBES; i++) {
        const bit = (h1 + Math.imul(i, h2)) & mask;
        const w = bit >>> 5;
        words[w] = words[w]! | (1 << (bit & 31));
      }
      count++;
    },
    mayHave(key) {
      hash(key);
      for (let i = 0; i < PROBES; i++) {
        const bit = (h1 + Math.imul(i, h2)) & mask;
        if ((words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
      }
      return true;
    },
    get count() {
      return count;
    },
    capacity,
  };
}
