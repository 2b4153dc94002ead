import { randomBytes } from 'node:crypto';
import type { Context, ErrorHandler, MiddlewareHandler } from 'hono';
import { HttpError, sendError } from './errors.js';
import { FatalStorageError, NotLeaderError } from '../log/event-log.js';
import { ProofNeedsArchive } from '../log/checkpointer.js';

/** Gives each request an id (`X-Request-Id` on every response) and sets the no-store, no-sniff headers. */
export function requestIds(): MiddlewareHandler<{ Variables: { requestId: string } }> {
  return async (c, next) => {
    const requestId = randomBytes(8).toString('hex');
    c.set('requestId', requestId);
    await next();
    setHeader(c, 'X-Request-Id', requestId);
    setHeader(c, 'Cache-Control', 'no-store');
    setHeader(c, 'X-Content-Type-Options', 'nosniff');
    // Pages set their own (same-origin, so a browser's form POST carries its Origin); the API sends none.
    if (!c.res.headers.has('Referrer-Policy')) setHeader(c, 'Referrer-Policy', 'no-referrer');
  };
}

/**
 * Sets a header of the finished response in place. Hono's `c.header` on a finished response
 * builds the response again around its body, and @hono/node-server then streams that body
 * instead of writing the bytes it was given (for a 636 KB ingestion answer, a copy and a web
 * stream per header; docs/benchmarks.md). A response whose headers cannot change (one passed on
 * from `fetch`) still goes that way.
 */
function setHeader(c: Context, name: string, value: string): void {
  try {
    c.res.headers.set(name, value);
  } catch {
    c.header(name, value);
  }
}

/** The answer to a request in flight when the store failed. */
export const STORAGE_FAILED =
  'storage failure: the outcome of this request is unknown and the service is stopping; retrying with the same event ' +
  'ids (or the same collector envelope) is safe once it is back';

const CLIENT_CLOSED = 'request body incomplete: the client closed the connection before sending all of it';

function clientClosedMidBody(err: unknown, c: Context): boolean {
  const incoming = (c.env as { incoming?: { destroyed?: boolean } } | undefined)?.incoming;
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ECONNRESET' && incoming?.destroyed === true;
}

/**
 * Answers an HttpError as its ErrorResponse; anything else is logged with the request id and
 * answered with a generic 500 (no stack, no message, no path reaches the client).
 */
export function errorHandler(log: (line: Record<string, unknown>) => void): ErrorHandler {
  return (err, c: Context) => {
    if (err instanceof HttpError) return sendError(c, err);
    // The store failed under this request: its write may or may not be durable, and the process is
    // stopping. Ingest is idempotent by event id, so the client can safely send the same batch again.
    if (err instanceof FatalStorageError) return sendError(c, new HttpError(503, STORAGE_FAILED));
    // A JetStream node that stopped leading between the request's arrival and its write: nothing was written.
    if (err instanceof NotLeaderError)
      return sendError(
        c,
        new HttpError(
          503,
          'this node stopped leading while the request was under way: nothing was written; retry',
          undefined,
          { retryAfterSeconds: 2 },
        ),
      );
    // A log proof that needs records retention removed: made from their segment's archive, not here.
    if (err instanceof ProofNeedsArchive) return sendError(c, new HttpError(404, err.message));
    // The client closed its connection while its body was being read (Node fails the request stream
    // with `aborted`): its doing, not the service's. Nobody reads the answer; the request is
    // recorded as a bad one, and no error is logged.
    if (clientClosedMidBody(err, c)) return sendError(c, new HttpError(400, CLIENT_CLOSED));
    const requestId = c.get('requestId') as string;
    log({
      level: 'error',
      msg: 'unhandled error',
      requestId,
      error: (err as Error)?.name,
      detail: (err as Error)?.message?.slice(0, 500),
    });
    return sendError(c, new HttpError(500, `internal error; quote request id ${requestId}`));
  };
}
