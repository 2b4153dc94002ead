import type { Context } from 'hono';
import { MAX_JSON_DEPTH, jsonTextDepth, tooDeepPath } from '../json/depth.js';
import { HttpError } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Reads a request body of at most `limit` bytes. A larger Content-Length is refused before
 * reading; a body without one (chunked) is counted while streaming and refused as soon as it
 * passes the limit, so an oversized body is never held in memory.
 */
export async function readBodyBytes(c: Context, limit: number): Promise<Uint8Array> {
  const declared = c.req.header('content-length');
  if (declared !== undefined && (!/^\d+$/.test(declared) || Number(declared) > limit)) {
    throw new HttpError(413, `request body exceeds the limit of ${limit} bytes`);
  }
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
 * nesting at most MAX_JSON_DEPTH levels (checked on the bytes, before parsing), valid JSON.
 * Anything else is a 400 naming the problem. Duplicate keys are allowed; the last one wins.
 */
export function parseJsonBytes(bytes: Uint8Array): unknown {
  if (bytes.byteLength === 0) throw new HttpError(400, 'request body is empty; expected JSON');
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new HttpError(400, 'request body is not valid UTF-8');
  }
  if (jsonTextDepth(bytes) < 0) {
    throw new HttpError(400, `JSON nested deeper than ${MAX_JSON_DEPTH} levels`, [`${tooDeepPath(text)}: nesting deeper than ${MAX_JSON_DEPTH} levels`]);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    // The engine's message quotes the body; only the position is passed on.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new HttpError(400, 'malformed JSON', at ? [`(body): syntax error at position ${at}`] : undefined);
  }
}

/** Reads and parses a JSON body within `limit` (see parseJsonBytes); another media type is a 415. */
export async function readJsonBody(c: Context, limit: number): Promise<unknown> {
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new HttpError(415, 'expected Content-Type: application/json');
  }
  return parseJsonBytes(await readBodyBytes(c, limit));
}
