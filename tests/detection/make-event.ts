import * as v from 'valibot';
import { NormalizedEventSchema, type NormalizedEvent } from '../../src/events/normalized-event.js';
import { readFileSync } from 'node:fs';
import { fixturePath } from '../helpers/paths.js';

let counter = 0;

/** Optional parts of a test event; everything else gets a neutral default. */
export type EventParts = Partial<Omit<NormalizedEvent, 'source'>> & { adapter: string; instance?: string };

/** Builds a schema-valid NormalizedEvent following the normalizer conventions; throws if the parts are invalid. */
export function makeEvent(parts: EventParts): NormalizedEvent {
  const { adapter, instance, ...rest } = parts;
  counter += 1;
  const event: NormalizedEvent = {
    schemaVersion: 1,
    id: `${adapter}:test-${counter}`,
    category: 'system',
    class: 'log',
    activity: 'message',
    outcome: 'unknown',
    time: '2024-05-01T12:00:00Z',
    ingestedAt: '2024-05-01T12:00:01Z',
    source: { adapter, instance: instance ?? '-', recordId: `record-${counter}` },
    entityKeys: [],
    attributes: {},
    ...rest,
  };
  const checked = v.safeParse(NormalizedEventSchema, event);
  if (!checked.success) throw new Error(`test event is not a valid NormalizedEvent: ${checked.issues[0]?.message}`);
  return event;
}

/** A linux-journal event: `SYSLOG_IDENTIFIER`, `MESSAGE` and any other journal or recognizer fields. */
export function journal(program: string, message: string, extra: Partial<EventParts> & { fields?: Record<string, unknown> } = {}): NormalizedEvent {
  const { fields, ...rest } = extra;
  return makeEvent({
    adapter: 'linux-journal', instance: 'web1',
    attributes: { MESSAGE: message, SYSLOG_IDENTIFIER: program, _HOSTNAME: 'web1', PRIORITY: '6', ...fields },
    ...rest,
  });
}

/** A syslog-rfc5424 event with RFC 5424 header names as attributes. */
export function syslog(app: string, msg: string, extra: Partial<EventParts> & { fields?: Record<string, unknown> } = {}): NormalizedEvent {
  const { fields, ...rest } = extra;
  return makeEvent({
    adapter: 'syslog-rfc5424', instance: 'web1',
    attributes: { PRI: 38, FACILITY: 4, SEVERITY: 6, VERSION: 1, HOSTNAME: 'web1', 'APP-NAME': app, MSG: msg, ...fields },
    ...rest,
  });
}

/** A network-monitor event for one Zeek log; attributes keep Zeek's dotted keys. */
export function zeek(log: string, attributes: Record<string, unknown>, extra: Partial<EventParts> = {}): NormalizedEvent {
  return makeEvent({ adapter: 'network-monitor', instance: log, category: 'network', class: `zeek_${log}`, attributes, ...extra });
}

/** A collector event with Sysmon-style attribute names. */
export function collector(eventClass: string, attributes: Record<string, unknown>, extra: Partial<EventParts> = {}): NormalizedEvent {
  return makeEvent({ adapter: 'collector', instance: 'host-a', class: eventClass, attributes, ...extra });
}

/** An event at a given second offset from a base time (for correlation windows). */
export function at(event: NormalizedEvent, seconds: number): NormalizedEvent {
  const base = Date.parse('2024-05-01T12:00:00Z');
  return { ...event, time: new Date(base + seconds * 1000).toISOString() };
}

/** Reads a Sigma sample file. */
export function sigmaSample(dir: 'rules' | 'correlation-examples', file: string): string {
  return readFileSync(fixturePath('sigma', dir, file), 'utf8');
}
