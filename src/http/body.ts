import type { Context } from 'hono';
import { HttpError } from './errors.js';

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

/** Reads and parses a JSON body within `limit`; malformed JSON is a 400. */
export async function readJsonBody(c: Context, limit: number): Promise<unknown> {
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/([\w.+-]*\+)?json\b/i.test(type)) {
    throw new HttpError(415, 'expected Content-Type: application/json');
  }
  const bytes = await readBodyBytes(c, limit);
  if (bytes.byteLength === 0) throw new HttpError(400, 'request body is empty; expected JSON');
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch (err) {
    // The engine's message quotes the body; only the position is passed on.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new HttpError(400, 'malformed JSON', at ? [`(body): syntax error at position ${at}`] : undefined);
  }
}
