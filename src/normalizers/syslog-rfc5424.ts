/**
 * The `syslog-rfc5424` normalizer: one `{message, receivedAt?, peer?}` record holding one RFC 5424
 * message in, one NormalizedEvent out. Field handling and vocabulary: docs/normalizers/syslog-rfc5424.md.
 */
import type { NormalizedEvent } from '../events/normalized-event.js';
import { recognizeLinuxMessage } from './linux-messages.js';
import { eventSeverityFromSyslog } from './linux-messages/severity.js';
import { linuxEvent } from './linux-messages/to-event.js';
import { parseRfc5424, type SdElement, type SyslogMessage } from './syslog/rfc5424.js';
import { isoFromNanos, nanosFromIso } from '../kernel/time.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from './types.js';

const ADAPTER = 'syslog-rfc5424';

interface SyslogRecord {
  readonly message: string;
  readonly receivedAt?: string;
  readonly peer?: string;
}

/** Checks the record envelope; the message itself is judged by the RFC 5424 parser. */
function readRecord(record: unknown): SyslogRecord | string {
  if (typeof record !== 'object' || record === null || Array.isArray(record)) {
    return 'record: expected an object {message, receivedAt?, peer?}';
  }
  const { message, receivedAt, peer } = record as Record<string, unknown>;
  if (typeof message !== 'string') return 'message: expected the syslog message as a string';
  if (receivedAt !== undefined && (typeof receivedAt !== 'string' || nanosFromIso(receivedAt) === undefined)) {
    return 'receivedAt: expected an ISO 8601 date-time with a zone';
  }
  if (peer !== undefined && typeof peer !== 'string') return 'peer: expected a string';
  return { message, ...(receivedAt === undefined ? {} : { receivedAt }), ...(peer === undefined ? {} : { peer }) };
}

/** SD-PARAMs of one element as an object; a PARAM-NAME given several times keeps all its values in order. */
function paramsObject(params: SdElement['params']): Record<string, string | string[]> {
  const byName = new Map<string, string | string[]>();
  for (const [name, value] of params) {
    const seen = byName.get(name);
    byName.set(name, seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value]);
  }
  return Object.fromEntries(byName);
}

/** STRUCTURED-DATA as SD-ID -> params, or null for NILVALUE. fromEntries keeps any SD-ID as an ordinary key. */
function structuredData(elements: readonly SdElement[]): Record<string, unknown> | null {
  if (elements.length === 0) return null;
  return Object.fromEntries(elements.map((e) => [e.id, paramsObject(e.params)]));
}

/** The message's header, SD and MSG under their RFC 5424 names; NILVALUE fields are null. */
function attributesOf(m: SyslogMessage, rec: SyslogRecord): Record<string, unknown> {
  return {
    PRI: m.pri,
    FACILITY: m.facility,
    SEVERITY: m.severity,
    VERSION: m.version,
    TIMESTAMP: m.timestamp,
    HOSTNAME: m.hostname,
    'APP-NAME': m.appName,
    PROCID: m.procId,
    MSGID: m.msgId,
    'STRUCTURED-DATA': structuredData(m.structuredData),
    MSG: m.message,
    ...(rec.receivedAt === undefined ? {} : { receivedAt: rec.receivedAt }),
    ...(rec.peer === undefined ? {} : { peer: rec.peer }),
  };
}

/** TIMESTAMP when the sender gave one, else when the collector received it, else when Vigil ingested it. */
function timeOf(m: SyslogMessage, rec: SyslogRecord, ctx: NormalizeContext): string {
  const received = rec.receivedAt === undefined ? undefined : nanosFromIso(rec.receivedAt);
  const nanos = m.timestampNanos ?? received;
  return nanos === undefined ? ctx.ingestedAt : isoFromNanos(nanos);
}

function toEvent(record: unknown, rec: SyslogRecord, m: SyslogMessage, ctx: NormalizeContext): NormalizedEvent {
  const host = m.hostname ?? undefined;
  const recognized =
    m.message === null
      ? undefined
      : recognizeLinuxMessage({
          message: m.message,
          ...(m.appName === null ? {} : { program: m.appName }),
          ...(host === undefined ? {} : { host }),
          ...(m.procId === null ? {} : { pid: m.procId }),
        });
  return linuxEvent({
    adapter: ADAPTER,
    record,
    ctx,
    time: timeOf(m, rec, ctx),
    host,
    recognized,
    fallback: { category: 'system', severity: eventSeverityFromSyslog(m.severity) },
    attributes: attributesOf(m, rec),
    extraKeys: [host === undefined ? undefined : `host:${host}`],
  });
}

function normalize(record: unknown, ctx: NormalizeContext): NormalizeResult {
  const rec = readRecord(record);
  if (typeof rec === 'string') return { ok: false, error: rec };
  const parsed = parseRfc5424(rec.message);
  if (!parsed.ok) return { ok: false, error: parsed.error };
  return { ok: true, events: [toEvent(record, rec, parsed.message, ctx)] };
}

/** Normalizer for RFC 5424 syslog messages (POST /api/v1/ingest/syslog-rfc5424). */
export const syslogRfc5424: Normalizer = { name: ADAPTER, normalize };
