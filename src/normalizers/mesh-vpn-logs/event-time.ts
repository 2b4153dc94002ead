import { nanosFromEpochSeconds, nanosFromIso } from '../../kernel/time.js';
import { type Decoded, fail, isAbsent, ok } from '../opentelemetry-log/decoded.js';

/** One place a record may carry its time, with the parser for that field. */
export interface TimeCandidate {
  readonly path: string;
  readonly value: unknown;
  readonly parse: (value: unknown) => bigint | undefined;
  readonly expected: string;
}

/** Epoch nanoseconds of the first candidate that is present; a present but unreadable one refuses the record. */
export function firstTime(candidates: readonly TimeCandidate[]): Decoded<bigint> {
  for (const c of candidates) {
    if (isAbsent(c.value)) continue;
    const ns = c.parse(c.value);
    return ns === undefined ? fail(c.path, `expected ${c.expected}`) : ok(ns);
  }
  return fail(candidates.map((c) => c.path).join(' / '), 'missing (the record carries no time)');
}

/** An RFC 3339 date-time string with a zone, as Tailscale's API writes `start`, `end`, `logged`, `eventTime`. */
export function rfc3339Nanos(value: unknown): bigint | undefined {
  return typeof value === 'string' ? nanosFromIso(value) : undefined;
}

/**
 * A log-streaming time: epoch seconds (number or digit string), RFC 3339, or the zone-less
 * `YYYY-MM-DD hh:mm:ss.fffffffff` form of `fields.recorded`, which Tailscale writes in UTC.
 */
export function streamNanos(value: unknown): bigint | undefined {
  if (typeof value === 'number') return nanosFromEpochSeconds(value);
  if (typeof value !== 'string') return undefined;
  if (/^\d{1,15}(\.\d+)?$/.test(value)) return nanosFromEpochSeconds(value);
  const spaced = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?)$/.exec(value);
  return nanosFromIso(spaced ? `${spaced[1]}T${spaced[2]}Z` : value);
}
