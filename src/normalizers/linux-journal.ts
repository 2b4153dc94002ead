/**
 * The `linux-journal` normalizer: one `journalctl -o json` entry in, one NormalizedEvent out.
 * Field handling and vocabulary: docs/normalizers/linux-journal.md.
 */
import type { NormalizedEvent } from '../events/normalized-event.js';
import { recognizeLinuxMessage, type LinuxMessageInput, type RecognizedMessage } from './linux-messages.js';
import { recognizeJournalCatalog, type JournalField } from './linux-messages/journal-catalog.js';
import { decodeJournalValue, journalString } from './linux-messages/journal-values.js';
import { eventSeverityFromSyslog } from './linux-messages/severity.js';
import { linuxEvent, setOwn } from './linux-messages/to-event.js';
import { isoFromNanos, nanosFromEpochMicros } from '../kernel/time.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from './types.js';

const ADAPTER = 'linux-journal';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The entry's fields with byte arrays decoded; fromEntries keeps a `__proto__` key as an ordinary field. */
function decodeEntry(entry: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(entry)) setOwn(out, k, decodeJournalValue(entry[k]));
  return out;
}

function fieldReader(attributes: Record<string, unknown>): JournalField {
  return (name) => (Object.hasOwn(attributes, name) ? journalString(attributes[name]) : undefined);
}

function micros(value: string | undefined): bigint | undefined {
  return value === undefined ? undefined : nanosFromEpochMicros(value);
}

/** When the message was generated (`_SOURCE_REALTIME_TIMESTAMP`), else when journald stored it. */
function eventNanos(field: JournalField): bigint | undefined {
  return micros(field('_SOURCE_REALTIME_TIMESTAMP')) ?? micros(field('__REALTIME_TIMESTAMP'));
}

function recognize(field: JournalField, input: LinuxMessageInput): RecognizedMessage | undefined {
  return recognizeJournalCatalog(field('MESSAGE_ID'), field, input) ?? recognizeLinuxMessage(input);
}

function messageInput(field: JournalField): LinuxMessageInput {
  const program = field('SYSLOG_IDENTIFIER') ?? field('_COMM');
  const host = field('_HOSTNAME');
  // _PID is set by journald itself; SYSLOG_PID is whatever the sender wrote.
  const pid = field('_PID') ?? field('SYSLOG_PID');
  return {
    message: field('MESSAGE') ?? '',
    ...(program === undefined ? {} : { program }),
    ...(host === undefined ? {} : { host }),
    ...(pid === undefined ? {} : { pid }),
  };
}

/** Keys every entry gets from the journal's trusted fields: the host, the sending service, the sending process. */
function journalKeys(field: JournalField, input: LinuxMessageInput): (string | undefined)[] {
  const unit = field('_SYSTEMD_UNIT');
  const pid = field('_PID');
  return [
    input.host === undefined ? undefined : `host:${input.host}`,
    unit !== undefined && unit.endsWith('.service') ? `service:${unit}` : undefined,
    input.host !== undefined && pid !== undefined && /^\d{1,10}$/.test(pid)
      ? `process:${input.host}/${pid}`
      : undefined,
  ];
}

function toEvent(
  record: unknown,
  attributes: Record<string, unknown>,
  ctx: NormalizeContext,
  nanos: bigint,
): NormalizedEvent {
  const field = fieldReader(attributes);
  const input = messageInput(field);
  return linuxEvent({
    adapter: ADAPTER,
    record,
    ctx,
    time: isoFromNanos(nanos),
    host: input.host,
    recognized: recognize(field, input),
    // A unit of a user's own service manager is an application; everything else the system's.
    fallback: {
      category: field('_SYSTEMD_USER_UNIT') === undefined ? 'system' : 'application',
      severity: eventSeverityFromSyslog(field('PRIORITY')),
    },
    attributes,
    extraKeys: journalKeys(field, input),
  });
}

function normalize(record: unknown, ctx: NormalizeContext): NormalizeResult {
  if (!isPlainObject(record))
    return { ok: false, error: 'record: expected a journal entry object (journalctl -o json)' };
  const attributes = decodeEntry(record);
  const nanos = eventNanos(fieldReader(attributes));
  if (nanos === undefined) {
    return {
      ok: false,
      error:
        '__REALTIME_TIMESTAMP: expected epoch microseconds as a decimal string (and no usable ' +
        '_SOURCE_REALTIME_TIMESTAMP)',
    };
  }
  return { ok: true, events: [toEvent(record, attributes, ctx, nanos)] };
}

/** Normalizer for `journalctl -o json` entries (POST /api/v1/ingest/linux-journal). */
export const linuxJournal: Normalizer = { name: ADAPTER, normalize };
