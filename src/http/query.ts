import * as v from 'valibot';
import { epochMillisOf } from '../normalizers/time.js';

/** The `limit` query parameter of every list route: an integer 1..1000. */
export const QueryLimit = v.pipe(v.string(), v.regex(/^\d{1,4}$/, 'expected an integer 1..1000'), v.transform(Number), v.minValue(1), v.maxValue(1000));

/**
 * A validated ISO 8601 time as Vigil writes its own times (UTC, milliseconds, `toISOString`), so it
 * compares as a string with record times and alert times.
 */
export function canonicalIso(iso: string): string {
  return new Date(epochMillisOf(iso) ?? Number.NaN).toISOString();
}
