import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** A destination's answer to one POST. */
export interface PostAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The body, at most 64 KiB of it. */
  readonly text: string;
}

const ANSWER_BYTES = 64 * 1024;

/** POSTs `body` to `url` within `timeoutMs` (connection and answer); rejects on a network error or time-out. */
export function postBody(
  url: URL,
  body: Buffer,
  headers: Readonly<Record<string, string>>,
  opts: { timeoutMs: number; ca?: string },
): Promise<PostAnswer> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(body.length) },
        ...(opts.ca !== undefined ? { ca: opts.ca } : {}),
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < ANSWER_BYTES) chunks.push(chunk.subarray(0, ANSWER_BYTES - size));
          size += chunk.length;
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', (err) => {
          clearTimeout(timer);
          reject(err);
        });
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}

/**
 * Milliseconds a `Retry-After` header asks for (seconds or an HTTP date), capped at an hour; undefined when absent or
 * unreadable.
 */
export function retryAfterMs(value: string | string[] | undefined, nowMs: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || v.trim() === '') return undefined;
  const ms = /^\d{1,10}$/.test(v.trim()) ? Number(v.trim()) * 1000 : Date.parse(v) - nowMs;
  if (!Number.isFinite(ms)) return undefined;
  return Math.min(Math.max(ms, 0), 3_600_000);
}
