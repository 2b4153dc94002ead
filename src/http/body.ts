import { isAscii, isUtf8 } from 'node:buffer';
import type { Context } from 'hono';
import { parseArrayInPieces } from '../kernel/json/array-pieces.js';
import { asBuffer, latin1Text, utf8Text } from '../kernel/json/buffer-text.js';
import { MAX_JSON_DEPTH, tooDeepPath, withinDepth } from '../kernel/json/depth.js';
import { HttpError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads a request body of at most `limit` bytes. A larger Content-Length is refused before
 * reading; a body without one (chunked) is counted while streaming and refused as soon as it
 * passes the limit, so an oversized body is never held in memory. An admitted ingest request
 * (`bodyDeadline`, src/http/admission.ts) whose body has not all arrived by its deadline is a 408.
 */
export async function readBodyBytes(c: Context, limit: number): Promise<Uint8Array> {
  const deadline = c.get('bodyDeadline') as number | undefined;
  const read = readWithin(c, limit);
  if (deadline === undefined) return read;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HttpError(408, 'request body not received in time')),
      Math.max(0, deadline - Date.now()),
    );
    timer.unref();
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
    read.catch(() => undefined);
  }
}

async function readWithin(c: Context, limit: number): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > limit)) {
    throw new HttpError(413, `request body exceeds the limit of ${limit} bytes`);
  }
  // Node's parser delivers exactly the declared length, so it is read whole: @hono/node-server then
  // reads the socket's chunks itself, without building a web Request and stream around them
  // (docs/benchmarks.md).
  if (declared !== undefined) return new Uint8Array(await c.req.raw.arrayBuffer());
  const body = c.req.raw.body;
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new HttpError(413, `request body exceeds the limit of ${limit} bytes`);
    }
    chunks.push(value);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}

/**
 * Parses JSON bytes at the edge, before any handler or normalizer sees the value: valid UTF-8,
 * valid JSON, nesting at most MAX_JSON_DEPTH levels. Anything else is a 400 naming the problem.
 * Duplicate keys are allowed; the last one wins.
 *
 * The nesting is checked on the parsed value: V8's parser does not recurse, and a body nested as
 * deep as its size allows costs it little more than the costliest flat body of the same size (1
 * MiB: about 150 ms and 30 MiB against 60 ms and 22 MiB for `[{},{},…]`), so the size bound holds
 * the parse; what does recurse (serializers, the log's encoder) never sees such a value. Walking
 * the value costs a fifth of scanning the bytes (docs/benchmarks.md).
 */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) throw new HttpError(400, 'request body is empty; expected JSON');
  const buf = asBuffer(bytes);
  // What the fatal decoder below refuses (simdutf's check, as strict, a hundred times faster).
  if (!isUtf8(buf)) throw new HttpError(400, 'request body is not valid UTF-8');
  // A large array is parsed in pieces, without the one large string (src/kernel/json/array-pieces.ts).
  const pieces = parseArrayInPieces(buf, hasBom(buf) ? 3 : 0);
  if (pieces !== undefined) {
    if (!withinDepth(pieces)) throw tooDeep(utf8.decode(bytes));
    return pieces;
  }
  const text = utf8.decode(bytes);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // The engine's message quotes the body; only the position is passed on.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new HttpError(400, 'malformed JSON', at ? [`(body): syntax error at position ${at}`] : undefined);
  }
  if (!withinDepth(value)) throw tooDeep(text);
  return value;
}

/** The 400 of a body nested past the bound, naming where in `text`. */
const tooDeep = (text: string) =>
  new HttpError(400, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, [
    `${tooDeepPath(text)}: nesting deeper than ${MAX_JSON_DEPTH} levels`,
  ]);

/** Whether the bytes begin with UTF-8's byte-order mark, which the decoder (ignoreBOM: false) drops. */
const hasBom = (b: Buffer) => b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;

/** Reads and parses a JSON body within `limit` (see parseJsonBytes); another media type is a 415. */
export async function readJsonBody(c: Context, limit: number): Promise<unknown> {
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new HttpError(415, 'expected Content-Type: application/json');
  }
  return parseJsonBytes(await readBodyBytes(c, limit));
}

/**
 * The media types of a body of one JSON value per line (NDJSON, JSON Lines), as Zeek and `journalctl -o json` write.
 */
export const JSON_LINES_TYPES = [
  'application/x-ndjson',
  'application/ndjson',
  'application/jsonl',
  'application/x-jsonlines',
  'application/jsonlines',
] as const;

/** The shapes every ingest route accepts, named in its 400 and 415 answers. */
export const BATCH_SHAPES =
  'a JSON array of records, a JSON object {records, context}, or one JSON object per line (Content-Type: ' +
  'application/x-ndjson)';

const isJsonLinesType = (type: string) =>
  (JSON_LINES_TYPES as readonly string[]).includes(type.split(';')[0]!.trim().toLowerCase());

/**
 * Parses a body of one JSON value per line into the array of those values. Blank lines (and a
 * trailing newline, `\r\n` endings) are skipped; a bad line is a 400 naming its line number. The
 * values are nested one level under the batch's array, so a line may nest one level less.
 */
export function parseJsonLines(bytes: Uint8Array): unknown[] {
  return parseNumberedJsonLines(bytes).values;
}

/** JSON lines as parseJsonLines reads them, with the line number (from 1) of each value. */
export interface NumberedLines {
  readonly values: unknown[];
  readonly lines: number[];
}

/**
 * parseJsonLines, also answering the line each value came from (blank lines are skipped, so they differ).
 * Given `unreadable`, a line that is not JSON (or nests too deep) does not refuse the body: it is a
 * `null` value whose problem is set in `unreadable` under its index, for a route that refuses records
 * one by one.
 */
export function parseNumberedJsonLines(bytes: Uint8Array, unreadable?: Map<number, string>): NumberedLines {
  if (bytes.byteLength === 0) throw new HttpError(400, 'request body is empty; expected one JSON object per line');
  const buf = asBuffer(bytes);
  if (!isUtf8(buf)) throw new HttpError(400, 'request body is not valid UTF-8');
  // Each line is decoded on its own: a string of the whole body would be one past V8's regular
  // heap pages, freshly mapped each time (src/kernel/json/array-pieces.ts). A line ends at LF, which is
  // never inside a UTF-8 character. A leading byte-order mark, which the decoder dropped, is
  // white space to `trim`.
  const ascii = isAscii(buf);
  const values: unknown[] = [];
  const lines: number[] = [];
  const issues: string[] = [];
  const tooDeep: string[] = [];
  let start = 0;
  for (let i = 0; start <= buf.length; i++) {
    let end = buf.indexOf(0x0a, start);
    if (end === -1) end = buf.length;
    const line = (ascii ? latin1Text(buf, start, end) : utf8Text(buf, start, end)).trim();
    start = end + 1;
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      const at = /position (\d+)/.exec((err as Error).message)?.[1];
      const problem = `not one JSON value${at ? ` (syntax error at column ${Number(at) + 1})` : ''}`;
      if (unreadable) {
        unreadable.set(values.push(null) - 1, `record: ${problem}`);
        lines.push(i + 1);
      } else if (issues.length < 20) issues.push(`line ${i + 1}: ${problem}`);
      continue;
    }
    // Checked on each line's value, as parseJsonBytes does on a whole body.
    if (withinDepth(value, MAX_JSON_DEPTH - 1)) {
      values.push(value);
      lines.push(i + 1);
    } else if (unreadable) {
      const where = tooDeepPath(line, MAX_JSON_DEPTH - 1);
      unreadable.set(values.push(null) - 1, `${where}: nesting deeper than ${MAX_JSON_DEPTH - 1} levels`);
      lines.push(i + 1);
    } else if (tooDeep.length < 20)
      tooDeep.push(
        `line ${i + 1}: ${tooDeepPath(line, MAX_JSON_DEPTH - 1)}: nesting deeper than ${MAX_JSON_DEPTH - 1} levels`,
      );
  }
  if (issues.length > 0) throw new HttpError(400, `malformed JSON lines; expected ${BATCH_SHAPES}`, issues);
  if (tooDeep.length > 0)
    throw new HttpError(400, `JSON nested deeper than ${MAX_JSON_DEPTH - 1} levels in a line`, tooDeep);
  if (values.length === 0)
    throw new HttpError(400, 'request body holds no JSON lines; expected one JSON object per line');
  return { values, lines };
}

/**
 * Reads an ingestion body within `limit`: JSON (an array or `{records, context}`), or JSON lines
 * (`application/x-ndjson` and its aliases; also a body sent as `application/json` that is not one
 * JSON document but one JSON value per line, as `curl --data-binary @conn.log` sends a Zeek log).
 * A body in neither shape is a 400 that names the accepted shapes; another media type is a 415.
 */
export async function readBatchBody(c: Context, limit: number): Promise<unknown> {
  return (await readBatchBodyText(c, limit)).value;
}

/** A batch body as parsed, with its bytes when it is one JSON array. */
export interface BatchBody {
  readonly value: unknown;
  /** The body's JSON array text without the whitespace around it, when the body is one JSON array. */
  readonly arrayText?: Uint8Array;
  /** The line number (from 1) of each record, when the body was read as JSON lines. */
  readonly lines?: readonly number[];
}

const isJsonSpace = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The bytes of a JSON document that parsed to an array, without the whitespace around it (undefined after a byte-order
 * mark).
 */
function arrayTextOf(bytes: Uint8Array): Uint8Array | undefined {
  let start = 0;
  let end = bytes.length;
  while (start < end && isJsonSpace(bytes[start]!)) start++;
  while (end > start && isJsonSpace(bytes[end - 1]!)) end--;
  return bytes[start] === 0x5b && bytes[end - 1] === 0x5d ? bytes.subarray(start, end) : undefined;
}

/**
 * readBatchBody, also answering the bytes of a body that is one JSON array (see BatchBody). Given
 * `unreadable`, a body sent as JSON lines keeps its lines that are not JSON as records refused there
 * (parseNumberedJsonLines).
 */
export async function readBatchBodyText(
  c: Context,
  limit: number,
  unreadable?: Map<number, string>,
): Promise<BatchBody> {
  const type = c.req.header('content-type');
  if (type !== undefined && isJsonLinesType(type)) {
    const { values, lines } = parseNumberedJsonLines(await readBodyBytes(c, limit), unreadable);
    return { value: values, lines };
  }
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new HttpError(415, `expected Content-Type: application/json or application/x-ndjson (${BATCH_SHAPES})`);
  }
  const bytes = await readBodyBytes(c, limit);
  try {
    const value = parseJsonBytes(bytes);
    const arrayText = Array.isArray(value) ? arrayTextOf(bytes) : undefined;
    return arrayText ? { value, arrayText } : { value };
  } catch (err) {
    if (!(err instanceof HttpError) || err.message !== 'malformed JSON') throw err;
    let numbered: NumberedLines;
    try {
      numbered = parseNumberedJsonLines(bytes);
    } catch {
      throw new HttpError(400, `malformed JSON; expected ${BATCH_SHAPES}`, err.issues);
    }
    const { values, lines } = numbered;
    // One value per line reads as JSON lines only when there are several lines of objects.
    if (values.length > 1 && values.every((l) => l !== null && typeof l === 'object' && !Array.isArray(l)))
      return { value: values, lines };
    throw new HttpError(400, `malformed JSON; expected ${BATCH_SHAPES}`, err.issues);
  }
}
