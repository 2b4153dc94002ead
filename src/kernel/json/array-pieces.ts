/**
 * A large JSON array parsed a piece at a time. `JSON.parse` takes a string, and the string of a
 * 640 KB batch body is larger than V8 puts on its regular heap pages (128 KiB): it gets pages of
 * its own, freshly mapped for it and unmapped once it is collected, a page fault every 4 KiB each
 * time. On the VMs we measure on a fault costs about 18 µs, so decoding such a body costs ten times
 * what copying it does, about 3 ms of the request thread a 1000-event body (docs/benchmarks.md).
 * Pieces of at most PIECE_BYTES are made and parsed on the regular heap, whose pages are reused.
 *
 * The body is cut between two objects (the bytes `},{`, as JSON.stringify writes an array of
 * them; `},` alone would mostly find the ends of objects nested in the elements), where such bytes
 * follow at least PIECE_BYTES after the last cut; nothing is scanned but by `indexOf`. A cut is
 * only kept when its piece parses: the first piece is the text from the opening `[` to the cut,
 * closed by `]`, and every later one is `[` and the text after the cut before. Each piece so starts where
 * the whole text's parser stands after a top-level comma (or after the opening bracket), so it can
 * only parse if its cut too is a top-level comma outside any string: one inside a string or a
 * nested value leaves its piece unterminated. The elements are then exactly the whole text's, and
 * the last piece, closed by the text's own `]`, checks that only white space follows. Anything
 * else (cuts that do not parse more than MISSES times, or one whose piece is past
 * MAX_MISSED_PIECE, an error in the text, a body that is not an array of objects) is answered
 * `undefined`, and the caller parses the whole text as before, which also names the error where
 * it is: a body made to miss costs at most about 640 KB of parsing more than before.
 */

import { isAscii } from 'node:buffer';
import { latin1Text, utf8Text } from './buffer-text.js';

/** The largest piece decoded at once: its string stays on the regular heap even as two-byte text. */
const PIECE_BYTES = 32 * 1024;
/** Cuts that did not parse (`},{` inside strings or nested arrays) before the body is parsed whole. */
const MISSES = 4;
/** The largest piece that may fail to parse before the body is parsed whole. */
const MAX_MISSED_PIECE = 4 * PIECE_BYTES;

const BETWEEN_OBJECTS = Buffer.from('},{');
const isJsonSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** The size past which an array may be parsed in pieces (at least two of them). */
export const PIECES_PAST_BYTES = 2 * PIECE_BYTES;

/**
 * The elements of the JSON array in `bytes` from `from` to `end` (valid UTF-8), parsed in pieces;
 * undefined when it is small, not an array, or not cut as above.
 */
export function parseArrayInPieces(bytes: Buffer, from: number, end = bytes.length): unknown[] | undefined {
  if (end - from <= PIECES_PAST_BYTES) return undefined;
  let start = from;
  while (start < end && isJsonSpace(bytes[start]!)) start++;
  if (bytes[start] !== 0x5b) return undefined;
  const ascii = isAscii(bytes.subarray(from, end));
  // Valid UTF-8 has no ASCII byte inside a character, so a cut never splits one.
  const text = (s: number, e: number): string => (ascii ? latin1Text(bytes, s, e) : utf8Text(bytes, s, e));
  const elements: unknown[] = [];
  let first = true;
  let misses = 0;
  let search = start + PIECE_BYTES;
  while (search < end - PIECE_BYTES) {
    const at = bytes.indexOf(BETWEEN_OBJECTS, search);
    if (at === -1 || at + BETWEEN_OBJECTS.length > end) break;
    const comma = at + 1;
    let piece: unknown[];
    try {
      piece = JSON.parse(first ? `${text(start, comma)}]` : `[${text(start, comma)}]`) as unknown[];
    } catch {
      // A piece that grew well past its size without parsing is not an array of objects cut as
      // above: so that a body built to miss costs little more than one whole parse, give up.
      if (++misses > MISSES || comma - start > MAX_MISSED_PIECE) return undefined;
      search = comma + 1;
      continue;
    }
    for (let i = 0; i < piece.length; i++) elements.push(piece[i]);
    first = false;
    start = comma + 1;
    search = start + PIECE_BYTES;
  }
  if (first) return undefined;
  let rest: unknown[];
  try {
    rest = JSON.parse(`[${text(start, end)}`) as unknown[];
  } catch {
    return undefined;
  }
  for (let i = 0; i < rest.length; i++) elements.push(rest[i]);
  return elements;
}
