import * as v from 'valibot';
import { NormalizedEventSchema } from './normalized-event.js';

/** What one export destination carries, as recorded (never a secret, a header or a file's content). */
export const ExportDestinationSummarySchema = v.strictObject({
  name: v.string(),
  kind: v.picklist(['webhook', 'otlp', 'syslog']),
  /** Where it goes: the URL, or `host:port` for syslog. */
  target: v.string(),
  carries: v.array(v.string()),
  events: v.optional(
    v.strictObject({
      categories: v.optional(v.array(v.string())),
      classes: v.optional(v.array(v.string())),
      adapters: v.optional(v.array(v.string())),
    }),
  ),
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

/**
 * `ExportCursorRecorded`: every item of the records up to `seq` was delivered to `destination`.
 * Only a node of a JetStream cluster records it (after each delivered batch), so the node that
 * leads next resumes there; an LMDB instance keeps its cursor in a file (docs/export.md).
 */
export const ExportCursorRecordedSchema = v.strictObject({
  destination: v.string(),
  seq: v.pipe(v.number(), v.integer(), v.minValue(0)),
});

/** The export events of the instance, by stored type name. */
export const EXPORT_EVENTS = {
  ExportConfigurationRecorded: ExportConfigurationRecordedSchema,
  ExportDestinationStateChanged: ExportDestinationStateChangedSchema,
  ExportCursorRecorded: ExportCursorRecordedSchema,
} as const;
