/**
 * Text of a span of a Buffer, through Buffer's own slicers (which Node's typings leave out):
 * `toString` checks its arguments first, and the span's decoders are what it calls.
 */

interface Slicers {
  latin1Slice(start: number, end: number): string;
  utf8Slice(start: number, end: number): string;
}

/** The bytes [from, to) as Latin-1: for ASCII bytes, their text, decoded fastest. */
export const latin1Text = (b: Buffer, from: number, to: number): string =>
  (b as unknown as Slicers).latin1Slice(from, to);

/** The bytes [from, to) as UTF-8 (valid UTF-8 cut only at ASCII bytes). */
export const utf8Text = (b: Buffer, from: number, to: number): string => (b as unknown as Slicers).utf8Slice(from, to);

/** A Buffer over the same memory. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
