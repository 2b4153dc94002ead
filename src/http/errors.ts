import type { Context } from 'hono';
import * as v from 'valibot';
import type { Rejection, RejectionKind } from '../commands/decision.js';
import { formatIssues } from '../kernel/issues.js';

/** The status of each typed rejection (STYLE.md "Thin HTTP"). */
export const STATUS_OF: Readonly<Record<RejectionKind, 400 | 401 | 403 | 404 | 409 | 413>> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
};

/** An error meant for the client: status plus an ErrorResponse body. Thrown from middleware and handlers. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 408 | 409 | 413 | 415 | 429 | 500 | 503 | 507,
    message: string,
    readonly issues?: readonly string[],
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

/** The HttpError for a command's rejection. */
export function fromRejection(r: Rejection): HttpError {
  return new HttpError(STATUS_OF[r.kind], r.message, r.issues, r.details);
}

/** The ErrorResponse body (spec 2.9), with extra detail fields where a route defines them. */
export function errorBody(
  message: string,
  issues?: readonly string[],
  details?: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  return { ...(details ?? {}), error: message, ...(issues && issues.length > 0 ? { issues: [...issues] } : {}) };
}

/** Sends an HttpError as JSON. */
export function sendError(c: Context, err: HttpError): Response {
  // An error that says when to come back (back-pressure, throttling, a lagging read side) says it
  // in the standard header too.
  const retryAfter = err.details?.['retryAfterSeconds'];
  if (typeof retryAfter === 'number') c.header('Retry-After', String(retryAfter));
  // The rest of a body that came too slowly is not waited for: the connection is not reused.
  if (err.status === 408) c.header('Connection', 'close');
  return c.json(errorBody(err.message, err.issues, err.details), err.status);
}

/** Parses with a schema or throws a 400 HttpError naming every bad path. */
export function parseOr400<S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  what: string,
  root = '',
): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (!r.success) throw new HttpError(400, `invalid ${what}`, formatIssues(r.issues, root));
  return r.output;
}
