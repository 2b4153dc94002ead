import * as v from 'valibot';
import type { MiddlewareHandler } from 'hono';
import { epochMillisOf } from '../normalizers/time.js';
import type { AppEnv } from './env.js';
import { HttpError } from './errors.js';

/**
 * Refuses a query parameter given twice (a handler reads one value, and which one a client meant is
 * a guess) and, on an operation that declares no query (`declared` false), any query parameter at
 * all: `POST /api/v1/events?dryRun=true` ingesting anyway is worse than a 400. Unknown parameters
 * of a declared query are refused by its strict schema.
 */
export function queryShape(declared: boolean): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const url = c.req.url;
    const at = url.indexOf('?');
    if (at !== -1) {
      const seen = new Set<string>();
      const issues = new Set<string>();
      for (const key of new URLSearchParams(url.slice(at + 1)).keys()) {
        const name = key.slice(0, 64);
        if (!declared) issues.add(`${name}: this operation takes no query parameters`);
        else if (seen.has(key)) issues.add(`${name}: given more than once`);
        seen.add(key);
      }
      if (issues.size > 0) throw new HttpError(400, 'invalid query', [...issues].slice(0, 20));
    }
    await next();
  };
}

/** The `limit` query parameter of every list route: an integer 1..1000. */
export const QueryLimit = v.pipe(v.string(), v.regex(/^\d{1,4}$/, 'expected an integer 1..1000'), v.transform(Number), v.minValue(1), v.maxValue(1000));

/**
 * A validated ISO 8601 time as Vigil writes its own times (UTC, milliseconds, `toISOString`), so it
 * compares as a string with record times and alert times.
 */
export function canonicalIso(iso: string): string {
  return new Date(epochMillisOf(iso) ?? Number.NaN).toISOString();
}
