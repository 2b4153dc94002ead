import type { NormalizedEvent } from '../events/normalized-event.js';
import { answering, type NormalizeContext, type NormalizeResult, type Normalizer } from './types.js';
import { type Decoded, fail, isAbsent, isObject, ok } from './opentelemetry-log/decoded.js';
import { type PlaceOf, placesOf } from './record-id.js';
import { OTEL_ADAPTER, logRecordEvent } from './opentelemetry-log/log-record.js';
import { decodeResource, decodeScope, logOrigin } from './opentelemetry-log/origin.js';

/** Top-level fields that mark a record as a bare LogRecord rather than an ExportLogsServiceRequest. */
const LOG_RECORD_FIELDS = [
  'timeUnixNano',
  'observedTimeUnixNano',
  'severityNumber',
  'severityText',
  'body',
  'attributes',
  'droppedAttributesCount',
  'flags',
  'traceId',
  'spanId',
  'eventName',
];

/** OTLP logs in the JSON encoding: one LogRecord (resource and scope from `context`) or a whole export request. */
export const opentelemetryLog: Normalizer = {
  name: OTEL_ADAPTER,
  normalize: answering(normalizeRecord),
};

function normalizeRecord(record: unknown, ctx: NormalizeContext): NormalizeResult {
  if (!isObject(record))
    return fail('record', 'expected a JSON object (an OTLP LogRecord or ExportLogsServiceRequest)');
  // A receiver ignores unknown fields, so an object with no LogRecord field at all is an
  // ExportLogsServiceRequest, possibly empty (e.g. snake_case `resource_logs`, which OTLP/JSON does not allow).
  const isLogRecord = !('resourceLogs' in record) && LOG_RECORD_FIELDS.some((field) => field in record);
  const events = isLogRecord ? fromLogRecord(record, ctx) : fromExportRequest(record, ctx);
  return events.ok ? { ok: true, events: events.value } : events;
}

/** A bare LogRecord: its resource and scope come from the batch `context` (`{resource, scope}`). */
function fromLogRecord(record: Record<string, unknown>, ctx: NormalizeContext): Decoded<NormalizedEvent[]> {
  const resource = decodeResource(ctx.context?.resource, 'context.resource');
  if (!resource.ok) return resource;
  const scope = decodeScope(ctx.context?.scope, 'context.scope');
  if (!scope.ok) return scope;
  const place = placesOf(OTEL_ADAPTER, '', record)();
  const event = logRecordEvent(record, '', logOrigin(resource.value, scope.value), place, ctx.ingestedAt);
  return event.ok ? ok([event.value]) : event;
}

/**
 * `{resourceLogs:[{resource, scopeLogs:[{scope, logRecords:[...]}]}]}`, as an OTLP/HTTP JSON exporter
 * posts it: one event per LogRecord. Any unreadable part refuses the whole request, naming its path.
 */
function fromExportRequest(request: Record<string, unknown>, ctx: NormalizeContext): Decoded<NormalizedEvent[]> {
  const resourceLogs = listAt(request.resourceLogs, 'resourceLogs');
  if (!resourceLogs.ok) return resourceLogs;
  const placeOf = placesOf(OTEL_ADAPTER, '', request);
  const events: NormalizedEvent[] = [];
  for (const [i, item] of resourceLogs.value.entries()) {
    const added = addResourceLogs(item, `resourceLogs[${i}]`, placeOf, events, ctx.ingestedAt);
    if (!added.ok) return added;
  }
  return ok(events);
}

function addResourceLogs(
  item: unknown,
  path: string,
  placeOf: PlaceOf,
  events: NormalizedEvent[],
  ingestedAt: string,
): Decoded<true> {
  if (!isObject(item)) return fail(path, 'expected a ResourceLogs object');
  const resource = decodeResource(item.resource, `${path}.resource`);
  if (!resource.ok) return resource;
  const scopeLogs = listAt(item.scopeLogs, `${path}.scopeLogs`);
  if (!scopeLogs.ok) return scopeLogs;
  for (const [j, scopeItem] of scopeLogs.value.entries()) {
    const where = `${path}.scopeLogs[${j}]`;
    if (!isObject(scopeItem)) return fail(where, 'expected a ScopeLogs object');
    const scope = decodeScope(scopeItem.scope, `${where}.scope`);
    if (!scope.ok) return scope;
    const logRecords = listAt(scopeItem.logRecords, `${where}.logRecords`);
    if (!logRecords.ok) return logRecords;
    const origin = logOrigin(resource.value, scope.value);
    for (const [k, record] of logRecords.value.entries()) {
      const recordPath = `${where}.logRecords[${k}]`;
      // The part is the running count, so ids stay distinct across resources and scopes.
      const event = logRecordEvent(record, recordPath, origin, placeOf(events.length, recordPath), ingestedAt);
      if (!event.ok) return event;
      events.push(event.value);
    }
  }
  return ok(true);
}

/** A repeated field: absent or null is empty (proto3 JSON), anything but an array is refused. */
function listAt(value: unknown, path: string): Decoded<readonly unknown[]> {
  if (isAbsent(value)) return ok([]);
  return Array.isArray(value) ? ok(value) : fail(path, 'expected an array');
}
