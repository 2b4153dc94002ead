import * as v from 'valibot';
import { NormalizedEventSchema } from './normalized-event.js';

/** What one export destination carries, as recorded (never a secret, a header or a file's content). */
export const ExportDestinationSummarySchema = v.strictObject({
  name: v.string(),
  kind: v.picklist(['webhook', 'otlp', 'syslog']),
  /** Where it goes: the URL, or `host:port` for syslog. */
  target: v.string(),
  carries: v.array(v.string()),
  events: v.optional(v.strictObject({
    categories: v.optional(v.array(v.string())),
    classes: v.optional(v.array(v.string())),
    adapters: v.optional(v.array(v.string())),
  })),
  includeRaw: v.boolean(),
});

/**
 * `ExportConfigurationRecorded`: the export configuration in force, recorded at start whenever it
 * differs from the last one recorded, so enabling, changing and disabling export are audited.
 */
export const ExportConfigurationRecordedSchema = v.strictObject({
  destinations: v.array(ExportDestinationSummarySchema),
});

/**
 * `ExportDestinationStateChanged`: a destination became failing (behind past its bound, or no
 * delivery for too long) or delivered again. Its event is detectable (`vigil` / `export`).
 */
export const ExportDestinationStateChangedSchema = v.strictObject({
  event: NormalizedEventSchema,
  destination: v.string(),
  state: v.picklist(['failing', 'delivering']),
  reason: v.string(),
  /** Records in the log not yet delivered to it. */
  lagRecords: v.number(),
  lastSuccessAt: v.optional(v.string()),
});

/** The export events of the instance, by stored type name. */
export const EXPORT_EVENTS = {
  ExportConfigurationRecorded: ExportConfigurationRecordedSchema,
  ExportDestinationStateChanged: ExportDestinationStateChangedSchema,
} as const;
