import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * SigmaHQ's regression events (EVTX rendered to JSON: `{Event: {System, EventData}}`) turned into
 * what the OpenTelemetry Collector's `windowseventlog` receiver sends for the same record: the
 * structured body of pkg/stanza/operator/input/windows (xml.go `parseBody`), as an OTLP/JSON
 * LogRecord. The receiver reads the event XML, so every `<Data>` value arrives as text.
 */

type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const attr = (v: unknown, name: string): unknown => (isMap(v) && isMap(v['#attributes']) ? v['#attributes'][name] : undefined);
const text = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));

/** Every JSON document of a file (some regression files hold several events one after another). */
export function jsonDocuments(raw: string): Json[] {
  const out: Json[] = [];
  let depth = 0, start = -1, inString = false, escaped = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{') { if (depth++ === 0) start = i; } else if (c === '}' && --depth === 0) out.push(JSON.parse(raw.slice(start, i + 1)) as Json);
  }
  return out;
}

/** An element of the rendered XML as the receiver's `user_data` map: child elements by name, values as text, attributes left out. */
function userDataMap(v: unknown): unknown {
  if (!isMap(v)) return text(v);
  return Object.fromEntries(Object.entries(v).filter(([k]) => k !== '#attributes').map(([k, c]) => [k, userDataMap(c)]));
}

/**
 * The receiver's body for one rendered event; `eventDataShape` picks one of the receiver versions'
 * `event_data` shapes. Receivers since March 2026 (contrib PR 46944) also send `<UserData>` as
 * `user_data`; `withUserData: false` is what earlier receivers send.
 */
export function receiverBody(doc: Json, eventDataShape: 'map' | 'array' = 'map', withUserData = true): Json {
  const event = doc['Event'] as Json;
  const system = event['System'] as Json;
  const eventId = system['EventID'];
  const data = isMap(event['EventData']) ? Object.entries(event['EventData']).filter(([k]) => k !== '#attributes') : [];
  return {
    event_id: { id: Number(isMap(eventId) ? eventId['#text'] ?? eventId['value'] : eventId), qualifiers: Number(attr(eventId, 'Qualifiers') ?? 0) },
    provider: { name: text(attr(system['Provider'], 'Name')), guid: text(attr(system['Provider'], 'Guid')), event_source: text(attr(system['Provider'], 'EventSourceName')) },
    system_time: text(attr(system['TimeCreated'], 'SystemTime')),
    computer: text(system['Computer']),
    channel: text(system['Channel']),
    record_id: Number(system['EventRecordID']),
    level: text(system['Level']),
    message: '',
    task: text(system['Task']),
    opcode: text(system['Opcode']),
    keywords: [text(system['Keywords'])],
    version: Number(system['Version'] ?? 0),
    event_data: eventDataShape === 'map'
      ? Object.fromEntries(data.map(([k, v]) => [k, text(v)]))
      : { data: data.map(([k, v]) => ({ [k]: text(v) })) },
    ...(withUserData && isMap(event['UserData']) ? { user_data: userDataMap(event['UserData']) } : {}),
  };
}

/** A plain JSON value as an OTLP/JSON AnyValue (the Collector's pdata encoding). */
export function anyValue(v: unknown): Json {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: v.map(anyValue) } };
  if (isMap(v)) return { kvlistValue: { values: Object.entries(v).map(([key, value]) => ({ key, value: anyValue(value) })) } };
  return {};
}

/** An OTLP/JSON export request holding the given receiver bodies, as the Collector's otlphttp exporter posts it. */
export function exportRequest(bodies: readonly Json[], host = 'win-host'): Json {
  return {
    resourceLogs: [{
      resource: { attributes: [{ key: 'host.name', value: { stringValue: host } }] },
      scopeLogs: [{
        scope: { name: 'github.com/open-telemetry/opentelemetry-collector-contrib/receiver/windowseventlogreceiver' },
        logRecords: bodies.map((body) => ({
          timeUnixNano: String(BigInt(Date.parse(String(body['system_time']))) * 1_000_000n),
          severityNumber: 9,
          severityText: 'INFO',
          body: anyValue(body),
        })),
      }],
    }],
  };
}

/** One regression case: the rule file and the events it must fire on. */
export interface RegressionCase {
  readonly ruleId: string;
  readonly title: string;
  readonly rulePath: string;
  readonly eventFile: string;
  readonly events: Json[];
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/** Rule files under `rules/` by their `id`. */
function rulesById(root: string): Map<string, string> {
  const byId = new Map<string, string>();
  for (const f of walk(join(root, 'rules')).filter((p) => p.endsWith('.yml'))) {
    const id = /^id: ([0-9a-f-]+)\s*$/m.exec(readFileSync(f, 'utf8'))?.[1];
    if (id) byId.set(id, f);
  }
  return byId;
}

/** Every `*.json` event file under `regression_data/rules/`, with the rule its info.yml names (found by id under `rules/`). */
export function regressionCases(root: string): RegressionCase[] {
  const base = join(root, 'regression_data', 'rules');
  const byId = rulesById(root);
  return walk(base).filter((f) => f.endsWith('.json')).sort().map((eventFile) => {
    const dir = eventFile.slice(0, eventFile.lastIndexOf('/'));
    const info = readFileSync(join(dir, 'info.yml'), 'utf8');
    const ruleId = /rule_metadata:\s*\n\s*- id: ([0-9a-f-]+)/.exec(info)?.[1] ?? '';
    const title = /\n\s+title: (.*)/.exec(info)?.[1] ?? '';
    return { ruleId, title, rulePath: byId.get(ruleId) ?? `(no rule with id ${ruleId})`, eventFile, events: jsonDocuments(readFileSync(eventFile, 'utf8')) };
  });
}
