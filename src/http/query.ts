import * as v from 'valibot';
import type { MiddlewareHandler } from 'hono';
import { epochMillisOf } from '../kernel/time.js';
import type { AppEnv } from './env.js';
import { HttpError } from './errors.js';

/**
 * What an operation takes in its query string: nothing (`none`), the parameters of a strict schema
 * (`strict`), or whatever probes and scrape jobs add, ignored (`any`: a non-strict empty schema).
 */
export type QueryShape = 'none' | 'strict' | 'any';

/**
 * Refuses a query parameter given twice (a handler reads one value, and which one a client meant is
 * a guess) and, on an operation that takes none, any query parameter at all:
 * `POST /api/v1/events?dryRun=true` ingesting anyway is worse than a 400. Unknown parameters of a
 * strict query are refused by its schema.
 */
export function queryShape(shape: QueryShape): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const url = c.req.url;
    const at = shape === 'any' ? -1 : url.indexOf('?');
    if (at !== -1) {
      const seen = new Set<string>();
      const issues = new Set<string>();
      for (const key of new URLSearchParams(url.slice(at + 1)).keys()) {
        const name = key.slice(0, 64);
        if (shape === 'none') issues.add(`${name}: this operation takes no query parameters`);
        else if (seen.has(key)) issues.add(`${name}: given more than once`);
        seen.add(key);
      }
      if (issues.size > 0) throw new HttpError(400, 'invalid query', [...issues].slice(0, 20));
    }
    await next();
  };
}

/** The `limit` query parameter of every list route: an integer 1..1000. */
export const QueryLimit = v.pipe(
  v.string(),
  v.regex(/^\d{1,4}$/, 'expected an integer 1..1000'),
  v.transform(Number),
  v.minValue(1),
  v.maxValue(1000),
);

/** The `cursor` query parameter of a paged list: the `nextCursor` its last page answered (opaque, bounded). */
export const QueryCursor = v.pipe(v.string(), v.maxLength(2048));

/** The query of a route that pages one list and takes nothing else: `limit` and the `cursor` it answered last. */
export const PageQuery = v.strictObject({
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
});

/**
 * A validated ISO 8601 time as Vigil writes its own times (UTC, milliseconds, `toISOString`), so it
 * compares as a string with record times and alert times.
 */
export function canonicalIso(iso: string): string {
  return new Date(epochMillisOf(iso) ?? Number.NaN).toISOString();
}
