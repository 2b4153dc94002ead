/**
 * Syslog severity (RFC 5424 §6.2.1, the journal's PRIORITY) to Vigil event severity 0..10.
 * Index = syslog level: emerg 10, alert 9, crit 8, err 6, warning 4, notice 3, info 1, debug 0.
 */
const EVENT_SEVERITY_BY_LEVEL: readonly number[] = [10, 9, 8, 6, 4, 3, 1, 0];

/** Event severity of a syslog level 0..7 (number or the journal's one-digit string), undefined otherwise. */
export function eventSeverityFromSyslog(level: number | string | undefined): number | undefined {
  if (level === undefined) return undefined;
  const n = typeof level === 'number' ? level : /^[0-7]$/.test(level) ? Number(level) : Number.NaN;
  return Number.isInteger(n) ? EVENT_SEVERITY_BY_LEVEL[n] : undefined;
}
