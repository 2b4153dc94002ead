import { linuxJournal } from './linux-journal.js';
import { meshVpnLogs } from './mesh-vpn-logs.js';
import { networkMonitor } from './network-monitor.js';
import { opentelemetryLog } from './opentelemetry-log.js';
import { syslogRfc5424 } from './syslog-rfc5424.js';
import type { Normalizer } from './types.js';

/** The five built-in normalizers by route name (spec 4.1). */
export const NORMALIZERS: ReadonlyMap<string, Normalizer> = new Map(
  [networkMonitor, syslogRfc5424, opentelemetryLog, meshVpnLogs, linuxJournal].map((n) => [n.name, n]),
);

/**
 * The normalizers that take a `logType` query parameter (network-monitor may do without when its records carry
 * `_path`).
 */
export const NEEDS_LOG_TYPE: ReadonlySet<string> = new Set(['network-monitor', 'mesh-vpn-logs']);

/** A Zeek log name: what `logType` may be for network-monitor beyond the mapped ones. */
export const ZEEK_LOG_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Checks the route's `logType` for a normalizer; returns the error message or undefined. A network-monitor batch
 * without one is named by each record's `_path`.
 */
export function logTypeProblem(n: Normalizer, logType: string | undefined): string | undefined {
  if (!NEEDS_LOG_TYPE.has(n.name)) {
    return logType === undefined ? undefined : `logType: ${n.name} takes no logType`;
  }
  const accepted = n.anyLogType ? `${n.logTypes!.join(', ')} or any other Zeek log name` : n.logTypes!.join(', ');
  // Zeek's JSON logs name themselves in `_path`: the normalizer takes it per record when no logType
  // is given, and refuses (by index) a record that has neither.
  if (logType === undefined) return n.anyLogType ? undefined : `logType: required for ${n.name}; accepted: ${accepted}`;
  const ok = n.anyLogType ? ZEEK_LOG_NAME.test(logType) : n.logTypes!.includes(logType);
  return ok
    ? undefined
    : `logType: unknown value ${JSON.stringify(logType.slice(0, 64))} for ${n.name}; accepted: ${accepted}`;
}
