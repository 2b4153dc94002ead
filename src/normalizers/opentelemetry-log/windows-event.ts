import { windowsCategories } from '../../detection/windows-logsources.js';
import { isObject } from './decoded.js';

/**
 * Windows Event Log records as the OpenTelemetry Collector's `windowseventlog` receiver sends them
 * (pkg/stanza/operator/input/windows, xml.go `parseBody`): a map body with `channel`, `computer`,
 * `event_id: {id, qualifiers}`, `provider: {name, guid, event_source}`, `record_id`, `system_time`,
 * `level`, `task`, `opcode`, `keywords`, `message` and `event_data`. `event_data` has had three
 * shapes across receiver versions, all read here: a map of the named `<Data>` elements (anonymous
 * ones as `param1`, `param2`, ...), or `{data: [{Name: value}, ...]}` (each element a one-key map).
 * Receivers since March 2026 (contrib PR 46944) also send `user_data`: the record's `<UserData>`
 * element as a map (its one child element, e.g. `Operation_ClientFailure`, holding the named
 * values), which some providers use instead of `<EventData>` (WMI-Activity 5858, Eventlog 1102).
 * Its leaf values are fields by their element names, as Sigma's Windows rules expect them.
 */

/** What the normalizer keeps of a Windows record: Sigma's field names, ready to merge into attributes. */
export interface WindowsRecord {
  readonly channel: string;
  readonly eventId: number;
  readonly computer?: string;
  readonly categories: string[];
  /** `EventID`, `Channel`, `Provider_Name`, `Computer`, ... and every event-data field by its own name. */
  readonly fields: Record<string, unknown>;
}

/** Event-data entries kept per record; a real record has a few dozen. */
const MAX_DATA_FIELDS = 512;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function integer(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  return typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : undefined;
}

/** The event-data fields by name, from any of the receiver's shapes. */
function eventData(raw: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (name: string, value: unknown): void => {
    if (name !== '' && Object.keys(out).length < MAX_DATA_FIELDS && !Object.hasOwn(out, name)) {
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    }
  };
  if (!isObject(raw)) return out;
  const list = raw['data'];
  if (Array.isArray(list)) {
    for (const item of list) if (isObject(item)) for (const [k, v] of Object.entries(item)) put(k, v);
    return out;
  }
  for (const [k, v] of Object.entries(raw)) put(k, v);
  return out;
}

/** How deep `user_data` is followed: the UserData element, its child, and nested values. */
const MAX_USER_DATA_DEPTH = 4;

/**
 * The leaf values of `user_data` by their element names (attributes and namespaces left out); event data wins a clash.
 */
function userData(raw: unknown, into: Record<string, unknown>): void {
  let count = Object.keys(into).length;
  const visit = (node: Record<string, unknown>, depth: number): void => {
    for (const [k, v] of Object.entries(node)) {
      if (k === '' || k.startsWith('#') || k.startsWith('@') || k === 'xmlns') continue;
      if (isObject(v)) {
        if (depth < MAX_USER_DATA_DEPTH) visit(v, depth + 1);
        continue;
      }
      if (count >= MAX_DATA_FIELDS || Object.hasOwn(into, k)) continue;
      Object.defineProperty(into, k, { value: v, enumerable: true, writable: true, configurable: true });
      count++;
    }
  };
  if (isObject(raw)) visit(raw, 1);
}

/** The Windows record in a decoded OTLP body, or undefined when the body is not one. */
export function windowsRecord(body: unknown): WindowsRecord | undefined {
  if (!isObject(body)) return undefined;
  const channel = text(body['channel']);
  const idObject = body['event_id'];
  const eventId = isObject(idObject) ? integer(idObject['id']) : undefined;
  if (
    channel === undefined ||
    eventId === undefined ||
    !isObject(body['provider']) ||
    body['system_time'] === undefined
  )
    return undefined;
  const provider = body['provider'];
  const data = eventData(body['event_data']);
  userData(body['user_data'], data);
  const system: Record<string, unknown> = {
    EventID: eventId,
    Channel: channel,
    Provider_Name: text(provider['name']),
    Provider_Guid: text(provider['guid']),
    Computer: text(body['computer']),
    EventRecordID: body['record_id'],
    Level: text(body['level']),
    Task: text(body['task']),
    Opcode: text(body['opcode']),
    Keywords: Array.isArray(body['keywords']) ? body['keywords'] : undefined,
    Message: text(body['message']),
  };
  const fields: Record<string, unknown> = { ...data };
  for (const [k, v] of Object.entries(system)) if (v !== undefined && !Object.hasOwn(fields, k)) fields[k] = v;
  const computer = text(body['computer']);
  return {
    channel,
    eventId,
    ...(computer ? { computer } : {}),
    categories: windowsCategories(channel, eventId, data['EventType']),
    fields,
  };
}
