import { isIP } from 'node:net';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { isoFromNanos } from '../../kernel/time.js';
import { decodeAnyValue, decodeKeyValues } from './any-value.js';
import { type Decoded, all, at, fail, isAbsent, isObject, ok, setOwn } from './decoded.js';
import { entityKey, entityKeyList } from './entity-keys.js';
import type { EventPlace } from '../record-id.js';
import { SEVERITY_BY_NUMBER, readHexId, readSeverityNumber, readString, readUint32, readUnixNano } from './fields.js';
import type { LogOrigin } from './origin.js';
import { windowsRecord, type WindowsRecord } from './windows-event.js';

/** The normalizer name, which is also every event's `source.adapter`. */
export const OTEL_ADAPTER = 'opentelemetry-log';

/**
 * LogRecord fields written into `attributes` under their own names. A record attribute with one of
 * these keys would collide, so it moves to the `log.attributes` object instead of being lost.
 */
const RESERVED = new Set([
  'body',
  'severityText',
  'severityNumber',
  'eventName',
  'flags',
  'droppedAttributesCount',
  'resource',
  'scope',
  'log.attributes',
]);

type LogRecordParts = ReturnType<typeof readLogRecord> extends Decoded<infer P> ? P : never;

/** Turns one OTLP/JSON LogRecord into a NormalizedEvent, or says which field makes it unreadable. */
export function logRecordEvent(
  record: unknown,
  where: string,
  origin: LogOrigin,
  place: EventPlace,
  ingestedAt: string,
): Decoded<NormalizedEvent> {
  if (!isObject(record)) return fail(where, 'expected a LogRecord object');
  const read = readLogRecord(record, where);
  if (!read.ok) return read;
  const parts = read.value;
  // timeUnixNano 0/absent means unknown: observed time next, then the time Vigil received it.
  const nanos = parts.time ?? parts.observed;
  const severity = parts.severityNumber === undefined ? undefined : SEVERITY_BY_NUMBER[parts.severityNumber];
  const parties = semanticParties(parts.attributes);
  const correlation = traceContext(record, parts.flags);
  const windows = windowsRecord(parts.body);
  return ok({
    schemaVersion: 1,
    id: place.id,
    category: windows ? 'system' : 'application',
    class: windows ? windowsClass(windows) : 'log_record',
    activity: windows ? `event_${windows.eventId}` : parts.eventName ? 'event' : 'log',
    outcome: 'unknown',
    time: nanos === undefined ? ingestedAt : isoFromNanos(nanos),
    ingestedAt,
    ...(severity === undefined ? {} : { severity }),
    source: { adapter: OTEL_ADAPTER, instance: origin.instance, recordId: place.recordId },
    entityKeys: entityKeyList([
      ...origin.entityKeys,
      ...parties.keys,
      ...(windows?.computer ? [entityKey('host', windows.computer)] : []),
    ]),
    ...(parties.actor ? { actor: parties.actor } : {}),
    ...(parties.sourceEndpoint ? { sourceEndpoint: parties.sourceEndpoint } : {}),
    ...(origin.service ? { service: origin.service } : {}),
    ...(correlation ? { correlation } : {}),
    attributes: windows ? withWindowsFields(eventAttributes(parts, origin), windows) : eventAttributes(parts, origin),
    rawReference: place.rawReference,
  });
}

function readLogRecord(record: Record<string, unknown>, where: string) {
  return all({
    time: readUnixNano(record.timeUnixNano, at(where, 'timeUnixNano')),
    observed: readUnixNano(record.observedTimeUnixNano, at(where, 'observedTimeUnixNano')),
    severityNumber: readSeverityNumber(record.severityNumber, at(where, 'severityNumber')),
    severityText: readString(record.severityText, at(where, 'severityText')),
    eventName: readString(record.eventName, at(where, 'eventName')),
    flags: readUint32(record.flags, at(where, 'flags')),
    droppedAttributesCount: readUint32(record.droppedAttributesCount, at(where, 'droppedAttributesCount')),
    body: isAbsent(record.body) ? ok(undefined) : decodeAnyValue(record.body, at(where, 'body')),
    attributes: decodeKeyValues(record.attributes, at(where, 'attributes')),
  });
}

/** Record attributes by their OTLP keys, then the LogRecord's own fields, resource and scope. */
function eventAttributes(parts: LogRecordParts, origin: LogOrigin): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const shadowed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(parts.attributes)) setOwn(RESERVED.has(key) ? shadowed : out, key, value);
  const own: Record<string, unknown> = {
    body: parts.body,
    // Proto3 empty strings and zero counts mean "not set", so they are left out like absent fields.
    severityText: parts.severityText || undefined,
    severityNumber: parts.severityNumber || undefined,
    eventName: parts.eventName || undefined,
    flags: parts.flags || undefined,
    droppedAttributesCount: parts.droppedAttributesCount || undefined,
    resource: Object.keys(origin.resource).length > 0 ? origin.resource : undefined,
    scope: origin.scope,
    'log.attributes': Object.keys(shadowed).length > 0 ? shadowed : undefined,
  };
  for (const [key, value] of Object.entries(own)) if (value !== undefined) out[key] = value;
  return out;
}

/** A Windows record's class: its first Sigma category (`process_creation`, ...), else `windows_event`. */
function windowsClass(windows: WindowsRecord): string {
  return windows.categories[0] ?? 'windows_event';
}

/**
 * A Windows record's fields under Sigma's names (`EventID`, `Channel`, `Image`, `CommandLine`, ...) beside
 * the OTLP attributes, so SigmaHQ rules match unchanged; an OTLP attribute of the same name keeps its place.
 */
function withWindowsFields(attributes: Record<string, unknown>, windows: WindowsRecord): Record<string, unknown> {
  for (const [key, value] of Object.entries(windows.fields))
    if (!Object.hasOwn(attributes, key)) setOwn(attributes, key, value);
  return attributes;
}

/**
 * Actor and client endpoint from the OpenTelemetry semantic-convention attributes `user.name`,
 * `client.address` and `client.port`, so identity detections can join OTLP logs to other sources.
 */
function semanticParties(attributes: Record<string, unknown>) {
  const user = attributes['user.name'];
  const address = attributes['client.address'];
  const port = attributes['client.port'];
  const ip = typeof address === 'string' && isIP(address) !== 0 ? address : undefined;
  const host = typeof address === 'string' && address !== '' && ip === undefined ? address : undefined;
  const validPort = typeof port === 'number' && Number.isInteger(port) && port > 0 && port <= 65535 ? port : undefined;
  const endpoint = { ...(ip ? { ip } : {}), ...(host ? { host } : {}), ...(validPort ? { port: validPort } : {}) };
  return {
    keys: [entityKey('user', user), entityKey('ip', ip)],
    actor: typeof user === 'string' && user !== '' ? { user } : undefined,
    sourceEndpoint: ip || host ? endpoint : undefined,
  };
}

/** `{traceId, spanId, flags}` with ids in lower-case hex and flags masked to the W3C trace-flags byte. */
function traceContext(record: Record<string, unknown>, flags: number | undefined): Record<string, unknown> | undefined {
  const traceId = readHexId(record.traceId, 32);
  const spanId = readHexId(record.spanId, 16);
  // Only the low 8 bits of `flags` are W3C trace flags; the upper 24 are reserved (logs.proto).
  const traceFlags = flags === undefined ? undefined : flags & 0xff;
  if (!traceId && !spanId && !traceFlags) return undefined;
  return {
    ...(traceId ? { traceId } : {}),
    ...(spanId ? { spanId } : {}),
    ...(traceFlags === undefined ? {} : { flags: traceFlags }),
  };
}
