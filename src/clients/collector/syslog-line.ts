import { createHash } from 'node:crypto';
import type { SubmittedEvent } from '../../events/collector-protocol/envelope.js';
import { linuxJournal } from '../../normalizers/linux-journal.js';
import { toSubmitted } from './submitted-event.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** `Nov 22 10:00:00 host prog[pid]: text` (RFC 3164 style) or the same with an RFC 3339 timestamp. */
const LINE = new RegExp(
  String.raw`^(?:<\d{1,3}>)?(?:([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)|` +
    String.raw`(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:Z|[+-]\d\d:\d\d))) (\S{1,255}) ` +
    String.raw`([^\s:[\]]{1,128})(?:\[(\d{1,10})\])?: ?(.*)$`,
  's',
);

function epochMs(m: RegExpExecArray, now: Date): number | undefined {
  if (m[6] !== undefined) {
    const ms = Date.parse(m[6].replace(/(\.\d{3})\d+/, '$1'));
    return Number.isNaN(ms) ? undefined : ms;
  }
  const month = MONTHS.indexOf(m[1]!);
  if (month < 0) return undefined;
  // The classic format has no year or zone: the agent's local time, this year unless that is in the future.
  const at = (year: number) => new Date(year, month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])).getTime();
  const year = now.getFullYear();
  return at(year) > now.getTime() + 86_400_000 ? at(year - 1) : at(year);
}

/** Where a line was read: the file, its inode and the line's byte offset. */
export interface LinePlace {
  readonly path: string;
  readonly ino: number;
  readonly offset: number;
}

/**
 * One syslog-format line as a submitted event: parsed into journal fields and recognised by the
 * same Linux message recognizer as the journal normalizer. The id hashes the place and the text,
 * so re-reading the same line after a restart gives the same id.
 */
export function syslogLineEvent(line: string, place: LinePlace, now: Date): SubmittedEvent {
  const m = LINE.exec(line);
  const ms = (m && epochMs(m, now)) ?? now.getTime();
  const record: Record<string, string> = {
    __REALTIME_TIMESTAMP: String(ms * 1000),
    MESSAGE: m ? m[10]! : line,
    ...(m ? { _HOSTNAME: m[7]!, SYSLOG_IDENTIFIER: m[8]! } : {}),
    ...(m?.[9] !== undefined ? { SYSLOG_PID: m[9] } : {}),
    VIGIL_FILE: place.path,
  };
  const r = linuxJournal.normalize(record, { ingestedAt: now.toISOString() });
  if (!r.ok || !r.events[0]) throw new Error('the journal normalizer refused a synthesized record');
  const digest = createHash('sha256').update(`${place.ino}\0${place.offset}\0${line}`).digest('hex').slice(0, 32);
  const e = toSubmitted(r.events[0]);
  return {
    ...e,
    id: `syslog-file:${digest}`,
    source: { adapter: 'syslog-file', instance: e.source.instance, recordId: `${place.ino}:${place.offset}` },
    rawReference: `${place.path}#${place.offset}`,
  };
}
