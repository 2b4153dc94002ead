import type { Context, MiddlewareHandler } from 'hono';
import type { Limits } from '../services/config-schema.js';
import type { AppEnv } from './env.js';
import { HttpError } from './errors.js';

/** One admitted ingest request: its share of the queue until it is answered. */
export interface IngestTicket {
  /** Counts the records of the request once its body is parsed. */
  records(n: number): void;
  release(): void;
}

/** How much ingest is admitted and not yet answered. */
export interface QueueDepth {
  readonly requests: number;
  readonly bytes: number;
  readonly records: number;
}

/**
 * The bound on ingest work in flight (`limits.ingestQueueBytes`, `limits.ingestQueueEvents`): a
 * request is admitted while the queue is under both bounds, or when the queue is empty (so one
 * request as large as the body limit always gets through); it holds its bytes and records until
 * its answer is sent, which is after its records are durable.
 */
export interface IngestAdmission {
  admit(bytes: number): IngestTicket | undefined;
  depth(): QueueDepth;
}

/** The admission of the configured limits. */
export function createIngestAdmission(limits: Pick<Limits, 'ingestQueueBytes' | 'ingestQueueEvents'>): IngestAdmission {
  let requests = 0;
  let bytes = 0;
  let records = 0;
  return {
    admit(size) {
      if (requests > 0 && (bytes + size > limits.ingestQueueBytes || records >= limits.ingestQueueEvents))
        return undefined;
      requests++;
      bytes += size;
      let counted = 0;
      let released = false;
      return {
        records(n) {
          if (released) return;
          records += n;
          counted += n;
        },
        release() {
          if (released) return;
          released = true;
          requests--;
          bytes -= size;
          records -= counted;
        },
      };
    },
    depth: () => ({ requests, bytes, records }),
  };
}

/** Seconds a client is asked to wait when the queue is full. */
export const QUEUE_RETRY_AFTER_SECONDS = 1;

/** The connection a request came on (Node's socket), when it came over one. */
function connectionOf(c: Context<AppEnv>): object | undefined {
  const socket = (c.env?.incoming as { socket?: unknown } | undefined)?.socket;
  return typeof socket === 'object' && socket !== null ? socket : undefined;
}

/**
 * Admits an ingest request into the queue before its body is read, or answers 429 with
 * Retry-After. Runs after the guard, so the refusal is attributed and counted.
 *
 * A connection that sends again before the Retry-After of its last refusal has passed is held,
 * its body unread, until it has, and only then admitted or refused: a client that resends at once
 * gets no more attempts than one that waits as asked, and costs no more than one body read and
 * discarded per Retry-After. Refusal times are kept per connection, weakly (gone with it).
 */
export function admitIngest(admission: IngestAdmission, bodyLimit: number, bodyMs: number): MiddlewareHandler<AppEnv> {
  const lastRefused = new WeakMap<object, number>();
  return async (c, next) => {
    const declared = c.req.header('content-length');
    const size =
      declared !== undefined && /^\d{1,12}$/.test(declared) ? Math.min(Number(declared), bodyLimit) : bodyLimit;
    let ticket = admission.admit(size);
    const connection = ticket ? undefined : connectionOf(c);
    if (connection) {
      const early = (lastRefused.get(connection) ?? -Infinity) + QUEUE_RETRY_AFTER_SECONDS * 1000 - Date.now();
      if (early > 0) {
        await new Promise((resolve) => setTimeout(resolve, early));
        ticket = admission.admit(size);
      }
      if (!ticket) lastRefused.set(connection, Date.now());
    }
    if (!ticket) {
      throw new HttpError(429, 'ingest queue is full: retry after the number of seconds in Retry-After', undefined, {
        retryAfterSeconds: QUEUE_RETRY_AFTER_SECONDS,
      });
    }
    c.set('ingestTicket', ticket);
    // Admitted bytes are reserved before they arrive: a body that trickles (or never ends) must not
    // hold them for the server's whole request timeout, starving every other ingest client.
    c.set('bodyDeadline', Date.now() + bodyMs);
    try {
      await next();
    } finally {
      ticket.release();
    }
  };
}
