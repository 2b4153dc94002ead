import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { HttpError } from '../http/errors.js';
import { createRefusalLedger } from '../http/refusals.js';

/** Failed sign-ins per source address: a burst of 20, then 30 a minute (the instance's defaults). */
const LIMITS = { authFailures: { burst: 20, perMinute: 30 }, refusalSummarySeconds: 60 };

/** Throttles failed sign-ins per source address, for the JSON and the form sign-in alike. */
export interface SignInThrottle {
  /** Seconds the request's address must wait before it may try again (0: it may now). */
  waitSeconds(c: Context): number;
  /** Notes a failed sign-in of the request's address. */
  failed(c: Context): void;
}

/** The peer address of a request (the authority trusts no forwarding header). */
function sourceOf(c: Context): string {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket?.remoteAddress ?? 'unknown';
}

/**
 * The instance's refusal ledger (a token bucket per address, memory bounded) applied to sign-ins;
 * closed intervals are logged as one summary line per address, never with a token.
 */
export function createSignInThrottle(now: () => Date, log: (line: Record<string, unknown>) => void): SignInThrottle {
  const ledger = createRefusalLedger(LIMITS);
  return {
    waitSeconds: (c) => ledger.throttledFor(sourceOf(c), now().getTime()),
    failed(c) {
      const at = now();
      ledger.failed(sourceOf(c), '/sign-in', at);
      for (const count of ledger.drain(at))
        log({
          level: 'warn',
          msg: 'failed sign-ins',
          sourceAddress: count.sourceAddress,
          count: count.count,
          firstAt: count.firstAt,
          lastAt: count.lastAt,
        });
    },
  };
}

/** The 429 of a throttled address, with when to come back. */
export function throttledError(seconds: number): HttpError {
  return new HttpError(429, 'too many failed sign-ins from this address: wait and try again', undefined, {
    retryAfterSeconds: seconds,
  });
}
