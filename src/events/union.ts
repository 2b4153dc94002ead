import type * as v from 'valibot';
import type { LogRecord } from '../kernel/record.js';
import { ACCESS_EVENTS } from './access-events.js';
import { COLLECTOR_EVENTS } from './collector-events.js';
import { CONSOLE_EVENTS } from './console-events.js';
import { CREDENTIAL_EVENTS } from './credential-events.js';
import { DETECTION_EVENTS } from './detection-events.js';
import { EVIDENCE_EVENTS } from './evidence-events.js';
import { EXCEPTION_EVENTS } from './exception-events.js';
import { HUNT_EVENTS } from './hunt-events.js';
import { INTEL_EVENTS } from './intel-events.js';
import { SETUP_EVENTS } from './setup-events.js';
import { EXPORT_EVENTS } from './export-events.js';
import { MONITOR_EVENTS } from './monitor-events.js';
import { RETENTION_EVENTS } from './retention-events.js';
import { LOG_EVENTS } from './log-events.js';

/** The schema of every event the instance has ever written, by stored type name. */
export const INSTANCE_EVENTS = {
  ...EVIDENCE_EVENTS,
  ...ACCESS_EVENTS,
  ...COLLECTOR_EVENTS,
  ...DETECTION_EVENTS,
  ...EXCEPTION_EVENTS,
  ...INTEL_EVENTS,
  ...HUNT_EVENTS,
  ...EXPORT_EVENTS,
  ...CONSOLE_EVENTS,
  ...MONITOR_EVENTS,
  ...CREDENTIAL_EVENTS,
  ...RETENTION_EVENTS,
  ...LOG_EVENTS,
} as const;

/** The schema of every event the setup authority has ever written, by stored type name. */
export const AUTHORITY_EVENTS = SETUP_EVENTS;

/** The schema of every stored event of either service, by type name: the one source of the event types. */
export const EVENT_SCHEMAS = { ...INSTANCE_EVENTS, ...AUTHORITY_EVENTS } as const;

/** Every type name found in a log, the legacy ones included. */
export type StoredEventType = keyof typeof EVENT_SCHEMAS;
/** Stored types no longer written: they are read as their successor (upcast.ts), so no projection sees them. */
export type LegacyEventType = 'DetectionHits';
/** The event types projections see. */
export type EventType = Exclude<StoredEventType, LegacyEventType>;
/** The instance's event types, as projections see them. */
export type InstanceEventType = Exclude<keyof typeof INSTANCE_EVENTS, LegacyEventType>;
/** The setup authority's event types. */
export type AuthorityEventType = keyof typeof AUTHORITY_EVENTS;

/** The data of one event type, exactly as stored. */
export type EventData<K extends StoredEventType> = Readonly<v.InferOutput<(typeof EVENT_SCHEMAS)[K]>>;
/** One event: a past-tense fact, its type name and its data. */
export type EventOf<K extends StoredEventType> = { readonly type: K; readonly data: EventData<K> };
type EventUnion<K extends StoredEventType> = { [T in K]: EventOf<T> }[K];

/** Any instance event as stored (legacy types included): what a decoded instance log may hold. */
export type StoredInstanceEvent = EventUnion<keyof typeof INSTANCE_EVENTS>;
/** Any instance event as projections see it. */
export type InstanceEvent = EventUnion<InstanceEventType>;
/** Any setup authority event. */
export type AuthorityEvent = EventUnion<AuthorityEventType>;

/** A log record carrying event `E`: `switch (record.type)` narrows its `data`. */
export type Recorded<E> = E extends unknown ? Omit<LogRecord, 'type' | 'data'> & E : never;
/** Any instance record as stored (legacy types included). */
export type StoredInstanceRecord = Recorded<StoredInstanceEvent>;
/** Any instance record as projections see it. */
export type InstanceRecord = Recorded<InstanceEvent>;
/** Any setup authority record. */
export type AuthorityRecord = Recorded<AuthorityEvent>;
/** Any record either service's projections see. */
export type DomainRecord = InstanceRecord | AuthorityRecord;

/** Builds an event whose data has exactly its type's stored shape. */
export function eventOf<K extends StoredEventType>(type: K, data: EventData<K>): EventOf<K> {
  return { type, data };
}
