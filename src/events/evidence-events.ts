import * as v from 'valibot';
import { NormalizedEventSchema } from './normalized-event.js';

/** `EventsIngested`: normalized events accepted through `POST /api/v1/events` (duplicates already removed). */
export const EventsIngestedSchema = v.strictObject({
  events: v.array(NormalizedEventSchema),
});

/**
 * `RawRecordsIngested`: raw records accepted through `POST /api/v1/ingest/{normalizer}`, kept with what they became.
 */
export const RawRecordsIngestedSchema = v.strictObject({
  normalizer: v.string(),
  logType: v.optional(v.string()),
  meshnet: v.optional(v.string()),
  /** The original records, as received: raw evidence stays local, in the log. */
  records: v.array(v.unknown()),
  /** The events they normalized to (duplicates of already stored events removed). */
  events: v.array(NormalizedEventSchema),
});

/** The evidence events of the instance, by stored type name. */
export const EVIDENCE_EVENTS = {
  EventsIngested: EventsIngestedSchema,
  RawRecordsIngested: RawRecordsIngestedSchema,
} as const;
