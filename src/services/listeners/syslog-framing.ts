/**
 * Syslog over a byte stream (RFC 6587, RFC 5425): octet-counting (`LEN SP MSG`) or LF-terminated
 * frames, told apart by the first byte of the connection (a digit, or anything else). Memory is
 * bounded by `maxBytes`: a longer frame is skipped without being held, keeping only its head.
 */

/** What a connection's bytes amount to, frame by frame. */
export type Frame =
  | { readonly kind: 'message'; readonly bytes: Buffer }
  /** A frame longer than the limit: its declared (or seen) length and its first bytes. */
  | { readonly kind: 'oversized'; readonly length: number; readonly head: Buffer }
  /** The stream cannot be read further (a broken octet count): the connection must close. */
  | { readonly kind: 'fatal'; readonly reason: string };

/** How much of an oversized frame is kept for its rejection record. */
export const HEAD_BYTES = 512;

/** An octet count has at most this many digits (RFC 5425 limits nothing; 10 digits is 9.3 GiB). */
const MAX_COUNT_DIGITS = 10;

const SP = 0x20;
const LF = 0x0a;

/** The framing a connection uses, once its first byte arrived. */
export type Framing = 'octet-counted' | 'lf';

/** A per-connection decoder: push the bytes as they arrive, get the complete frames. */
export interface FrameDecoder {
  push(chunk: Buffer): Frame[];
  /** The framing detected, or undefined before the first byte. */
  framing(): Framing | undefined;
  /** Bytes held for an incomplete frame (for tests and limits). */
  pending(): number;
}

/** A decoder for one connection with frames of at most `maxBytes`. */
export function frameDecoder(maxBytes: number): FrameDecoder {
  let mode: Framing | undefined;
  let buf: Buffer = Buffer.alloc(0);
  /** Bytes of an oversized frame still to skip (octet-counting), or -1 to skip to the next LF. */
  let skipping = 0;
  let failed = false;

  function octetFrames(out: Frame[]): void {
    for (;;) {
      if (skipping > 0) {
        const n = Math.min(skipping, buf.length);
        buf = buf.subarray(n);
        skipping -= n;
        if (skipping > 0) return;
      }
      // Some senders end each frame with LF as well; whitespace between frames is not a frame.
      let start = 0;
      while (start < buf.length && (buf[start] === LF || buf[start] === 0x0d)) start++;
      buf = buf.subarray(start);
      if (buf.length === 0) return;
      const space = buf.indexOf(SP);
      const digits = space < 0 ? buf.length : space;
      const countText = buf.subarray(0, digits).toString('latin1');
      const wellFormed = space < 0 ? /^([1-9]\d*)?$/.test(countText) : /^[1-9]\d*$/.test(countText);
      if (!wellFormed || digits > MAX_COUNT_DIGITS) {
        failed = true;
        out.push({
          kind: 'fatal',
          reason: wellFormed ? 'octet count too long' : 'expected an octet count (RFC 6587: MSG-LEN SP SYSLOG-MSG)',
        });
        return;
      }
      if (space < 0) return;
      const length = Number(countText);
      const body = buf.subarray(space + 1);
      if (length > maxBytes) {
        if (body.length < Math.min(length, HEAD_BYTES)) return;
        out.push({ kind: 'oversized', length, head: Buffer.from(body.subarray(0, HEAD_BYTES)) });
        buf = body;
        skipping = length;
        continue;
      }
      if (body.length < length) return;
      out.push({ kind: 'message', bytes: Buffer.from(body.subarray(0, length)) });
      buf = body.subarray(length);
    }
  }

  function lfFrames(out: Frame[]): void {
    for (;;) {
      const lf = buf.indexOf(LF);
      if (skipping < 0) {
        if (lf < 0) {
          buf = Buffer.alloc(0);
          return;
        }
        buf = buf.subarray(lf + 1);
        skipping = 0;
        continue;
      }
      if (lf < 0) {
        if (buf.length > maxBytes) {
          out.push({ kind: 'oversized', length: buf.length, head: Buffer.from(buf.subarray(0, HEAD_BYTES)) });
          buf = Buffer.alloc(0);
          skipping = -1;
        }
        return;
      }
      let end = lf;
      if (end > 0 && buf[end - 1] === 0x0d) end--;
      if (end > maxBytes) out.push({ kind: 'oversized', length: end, head: Buffer.from(buf.subarray(0, HEAD_BYTES)) });
      else if (end > 0) out.push({ kind: 'message', bytes: Buffer.from(buf.subarray(0, end)) });
      buf = buf.subarray(lf + 1);
    }
  }

  return {
    push(chunk) {
      if (failed || chunk.length === 0) return [];
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (mode === undefined) {
        const first = buf[0]!;
        mode = first >= 0x30 && first <= 0x39 ? 'octet-counted' : 'lf';
      }
      const out: Frame[] = [];
      if (mode === 'octet-counted') octetFrames(out);
      else lfFrames(out);
      return out;
    },
    framing: () => mode,
    pending: () => buf.length,
  };
}
