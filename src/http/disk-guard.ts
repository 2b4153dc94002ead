import type { MiddlewareHandler } from 'hono';
import type { AppDeps, AppEnv } from './env.js';
import { HttpError } from './errors.js';

/**
 * Refuses a write while the store's disk is past its flood mark (507 with Retry-After), before its
 * body is read; reads, the console and `/health` go on. Behind the guard, the refusal is counted
 * and logged as one summary per address and interval, not one access record each.
 */
export function refuseWritesPastFlood(deps: AppDeps): MiddlewareHandler<AppEnv> {
  return async (_c, next) => {
    const retryAfterSeconds = deps.monitor?.refusesWrites();
    if (retryAfterSeconds !== undefined) {
      throw new HttpError(
        507,
        "the store's disk is past its flood mark: writes are refused until space returns; retry after the number of " +
          'seconds in Retry-After',
        undefined,
        { retryAfterSeconds },
      );
    }
    await next();
  };
}
