import { ReadSideLagging } from '../projections/read-side/read-side.js';
import { HttpError } from './errors.js';

/** Seconds a client is asked to wait when the read side is behind. */
const LAGGING_RETRY_SECONDS = 5;

/**
 * Read-your-writes for handlers: waits (bounded) until the read side has folded every record
 * written before the request; when it is too far behind, the read is answered 503 with a
 * Retry-After instead of silently serving data older than the client's own writes.
 */
export function readYourWritesOf(wait: () => Promise<void>): () => Promise<void> {
  return () =>
    wait().catch((err: unknown) => {
      if (err instanceof ReadSideLagging) {
        throw new HttpError(503, `the read side is catching up (${err.message}); retry shortly`, undefined, {
          retryAfterSeconds: LAGGING_RETRY_SECONDS,
        });
      }
      throw err;
    });
}
