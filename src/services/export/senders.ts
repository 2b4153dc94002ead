import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ExportDestination } from './config.js';
import type { ExportItem } from './items.js';
import { postBody, retryAfterMs, type PostAnswer } from './http-post.js';
import { readHeadersFile, readSecretFile } from './secrets.js';
import { createSyslogSender } from './syslog-sender.js';
import { otlpRequest } from './otlp-body.js';

/** The outcome of one delivery attempt: delivered, or not (with when to try again, if the receiver said). */
export type SendResult =
  { readonly ok: true } | { readonly ok: false; readonly error: string; readonly retryAfterMs?: number };

/** Delivers batches of items to one destination. */
export interface Sender {
  send(items: readonly ExportItem[]): Promise<SendResult>;
  close(): void;
}

/** The header a webhook request is signed in: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const SIGNATURE_HEADER = 'vigil-signature';

/** The signature header value of a webhook body at time `t` (unix seconds). */
export function webhookSignature(secret: string, t: number, body: Buffer | string): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex')}`;
}

function answerResult(a: PostAnswer, nowMs: number): SendResult {
  if (a.status >= 200 && a.status < 300) return { ok: true };
  const after = retryAfterMs(a.headers['retry-after'], nowMs);
  const detail = a.text.replace(/\s+/g, ' ').slice(0, 200);
  return {
    ok: false,
    error: `HTTP ${a.status}${detail ? `: ${detail}` : ''}`,
    ...(after !== undefined ? { retryAfterMs: after } : {}),
  };
}

async function post(
  url: URL,
  body: Buffer,
  headers: Record<string, string>,
  d: ExportDestination,
  ca: string | undefined,
  now: () => number,
): Promise<SendResult> {
  try {
    return answerResult(
      await postBody(url, body, headers, { timeoutMs: d.timeoutSeconds * 1000, ...(ca !== undefined ? { ca } : {}) }),
      now(),
    );
  } catch (err) {
    return { ok: false, error: (err as Error).message || String(err) };
  }
}

/**
 * The sender of a destination, with its secrets read now (at start: a missing or group-readable
 * file stops start-up with a message naming it). Secrets stay in memory, never in logs or errors.
 */
export function createSender(d: ExportDestination, origin: string, now: () => number = Date.now): Sender {
  const what = `export destination ${d.name}`;
  const ca = d.caFile !== undefined ? readFileSync(d.caFile, 'utf8') : undefined;
  if (d.kind === 'syslog') return createSyslogSender(d, origin, ca);
  const extra = d.headersFile !== undefined ? readHeadersFile(d.headersFile, `${what} headersFile`) : {};
  const url = new URL(d.url);
  if (d.kind === 'otlp') {
    return {
      send: (items) =>
        post(
          url,
          Buffer.from(JSON.stringify(otlpRequest(items, origin))),
          { ...extra, 'content-type': 'application/json' },
          d,
          ca,
          now,
        ),
      close: () => undefined,
    };
  }
  const secret = readSecretFile(d.secretFile, `${what} secretFile`).trim();
  if (secret.length < 16)
    throw new Error(`refusing to start: ${what} secretFile: the secret must be at least 16 characters`);
  return {
    send(items) {
      const body = Buffer.from(JSON.stringify({ origin, destination: d.name, items }));
      const t = Math.floor(now() / 1000);
      return post(
        url,
        body,
        {
          ...extra,
          'content-type': 'application/json',
          'vigil-delivery': items[0]?.id ?? '',
          [SIGNATURE_HEADER]: webhookSignature(secret, t, body),
        },
        d,
        ca,
        now,
      );
    },
    close: () => undefined,
  };
}
