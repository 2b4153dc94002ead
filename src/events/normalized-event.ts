import * as v from 'valibot';
import { isIsoDateTime } from '../kernel/time.js';

/** The nine event categories of spec 2.12. */
export const CATEGORIES = [
  'identity',
  'network',
  'system',
  'application',
  'discovery',
  'configuration',
  'data',
  'health',
  'finding',
] as const;

/** The three outcomes of spec 2.1. */
export const OUTCOMES = ['success', 'failure', 'unknown'] as const;

/** Bounds shared by every route that accepts NormalizedEvents. */
export const EVENT_LIMITS = {
  entityKeys: 256,
  idLength: 256,
  shortString: 256,
  entityKeyLength: 512,
} as const;

/**
 * Whether `keys[i]` is the first of its value in an event's entity keys (a client may repeat one).
 * A scan of the keys before it is fastest for the usual handful; an event may carry up to
 * EVENT_LIMITS.entityKeys, and for that many pass a set (`seenKeys`) that keeps the walk linear
 * (256 keys: 0.4 ms an event by scanning, 7 µs with the set).
 */
export function firstOfKey(keys: readonly string[], i: number, seen: Set<string> | undefined): boolean {
  if (seen === undefined) return keys.indexOf(keys[i]!) === i;
  const before = seen.size;
  return seen.add(keys[i]!).size !== before;
}

/** The set `firstOfKey` needs for an event's keys: none for a handful. */
export const seenKeys = (keys: readonly string[]): Set<string> | undefined =>
  keys.length > 16 ? new Set() : undefined;

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 / RFC 3339 date-time with a zone, up to nanosecond precision. */
export const IsoDateTime = v.pipe(
  v.string(),
  v.regex(ISO_DATE_TIME, 'expected ISO 8601 date-time'),
  // Calendar-checked with the same integer parser the normalizers use (Date.parse rolls 02-30 over).
  v.check((s) => isIsoDateTime(s), 'expected ISO 8601 date-time'),
);

const ShortString = v.pipe(v.string(), v.minLength(1), v.maxLength(EVENT_LIMITS.shortString));
/** A JSON object (never an array, which `v.record` alone would take and copy into `{}`). */
const FreeObject = v.pipe(
  v.unknown(),
  v.check((o) => !Array.isArray(o), 'expected an object, not an array'),
  v.record(v.string(), v.unknown()),
);
const NullableObject = v.nullable(FreeObject);

/** EventSource: exactly adapter, instance and recordId (spec 2.1). */
export const EventSource = v.strictObject({
  adapter: ShortString,
  instance: ShortString,
  recordId: ShortString,
});

/** The NormalizedEvent schema (spec 2.1, schemaVersion 1). */
export const NormalizedEventSchema = v.strictObject({
  schemaVersion: v.literal(1),
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(EVENT_LIMITS.idLength)),
  category: v.picklist(CATEGORIES),
  class: ShortString,
  activity: ShortString,
  outcome: v.picklist(OUTCOMES),
  time: IsoDateTime,
  ingestedAt: IsoDateTime,
  severity: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(10))),
  source: EventSource,
  entityKeys: v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(EVENT_LIMITS.entityKeyLength))),
    v.maxLength(EVENT_LIMITS.entityKeys),
  ),
  actor: v.optional(NullableObject),
  sourceEndpoint: v.optional(NullableObject),
  destinationEndpoint: v.optional(NullableObject),
  service: v.optional(NullableObject),
  correlation: v.optional(FreeObject),
  attributes: FreeObject,
  rawReference: v.optional(v.nullable(v.union([v.string(), FreeObject]))),
});

/** One event category. */
export type Category = (typeof CATEGORIES)[number];
/** One event outcome. */
export type Outcome = (typeof OUTCOMES)[number];
/** A NormalizedEvent as it is stored, served and evaluated. */
export type NormalizedEvent = v.InferOutput<typeof NormalizedEventSchema>;

/**
 * The fields of a NormalizedEvent that the read side's folds read: the evidence index (time,
 * category, class, adapter, entity keys) and the graph (entity keys, endpoints, actor, service,
 * through src/projections/graph-relationships.ts; of the last four only `host`, `ip`, `user` and `name`). The
 * read side decodes evidence records to these alone (src/log/evidence-fields.ts).
 */
export type ReadSideEvent = Pick<
  NormalizedEvent,
  'time' | 'category' | 'class' | 'entityKeys' | 'actor' | 'sourceEndpoint' | 'destinationEndpoint' | 'service'
> & { readonly source: Pick<NormalizedEvent['source'], 'adapter'> };

/** The fields of a NormalizedEvent that a detection source's index keys are made of (src/detection/logsources.ts). */
export type LogsourceEvent = Pick<NormalizedEvent, 'source' | 'class' | 'attributes'>;

/**
 * The fields of a NormalizedEvent that the write side's models fold: its id (the evidence index),
 * category and time (counts, sources, activity), its source and its detection source's index keys
 * (sources, activity, monitoring). A replay or a restart decodes evidence records to these alone.
 */
export type WriteSideEvent = Pick<NormalizedEvent, 'id' | 'category' | 'time'> & LogsourceEvent;
