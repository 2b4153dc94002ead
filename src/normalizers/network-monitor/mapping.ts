import type { Category, Outcome } from '../../events/normalized-event.js';
import type { MaybeKey } from './keys.js';
import { compact } from './record.js';
import type { ZeekConn, ZeekRecord } from './record.js';

/** A free-form event object (actor, endpoint, service, correlation). */
export type Fields = Record<string, unknown>;

/**
 * What one per-log mapping decides about a record; the normalizer adds what every log shares
 * (id, time, source, attributes, endpoints from `id.*`, `uid` correlation, `ip:` keys of endpoints).
 */
export interface ZeekMapping {
  readonly category: Category;
  readonly class: string;
  readonly activity: string;
  readonly outcome: Outcome;
  readonly severity: number;
  readonly actor?: Fields | undefined;
  /** Replaces the `{ip: id.orig_h, port: id.orig_p}` default (logs without `id.*`). */
  readonly sourceEndpoint?: Fields | undefined;
  /** Replaces the `{ip: id.resp_h, port: id.resp_p}` default. */
  readonly destinationEndpoint?: Fields | undefined;
  readonly service?: Fields | undefined;
  /** Merged over `{uid}`. */
  readonly correlation?: Fields | undefined;
  /** Entity keys beyond the endpoint addresses, which are always added. */
  readonly keys?: readonly MaybeKey[];
}

/** A per-log mapping: pure, total over any JSON values in the record's fields. */
export type ZeekMapper = (record: ZeekRecord, conn: ZeekConn) => ZeekMapping;

/** Severity of routine network telemetry. */
export const SEVERITY_INFO = 1;
/** Severity of a failed authentication seen on the wire. */
export const SEVERITY_AUTH_FAILURE = 3;

/** The `service` object: `{name, protocol: proto, port: id.resp_p}`, without absent parts. */
export function serviceOf(name: string | undefined, conn: ZeekConn): Fields | undefined {
  return compact({ name, protocol: conn.proto, port: conn.respP });
}

/** An endpoint object `{ip, port, ...}` without absent parts, or undefined when empty. */
export function endpointOf(fields: Fields): Fields | undefined {
  return compact(fields);
}

/** success / failure for a Zeek bool, unknown when it is absent. */
export function outcomeOfFlag(value: boolean | undefined): Outcome {
  if (value === undefined) return 'unknown';
  return value ? 'success' : 'failure';
}

/** Outcome of a 3-digit protocol reply code (FTP, SMTP, HTTP): 1xx-3xx success, 4xx-5xx failure. */
export function outcomeOfReplyCode(code: number | undefined): Outcome {
  if (code === undefined || !Number.isInteger(code)) return 'unknown';
  if (code >= 100 && code < 400) return 'success';
  if (code >= 400 && code < 600) return 'failure';
  return 'unknown';
}

/** Severity of an authentication-bearing event: raised when the attempt failed. */
export function authSeverity(outcome: Outcome): number {
  return outcome === 'failure' ? SEVERITY_AUTH_FAILURE : SEVERITY_INFO;
}
