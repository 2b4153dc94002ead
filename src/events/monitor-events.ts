import * as v from 'valibot';

/** What kind of thing a watched source is: an adapter + instance pair, or a signed collector. */
export const SOURCE_KINDS = ['source', 'collector'] as const;

/** Where the store's free disk space stands against the watermarks (docs/monitoring.md). */
export const DISK_LEVELS = ['ok', 'low', 'flood'] as const;

/**
 * `SourceWentSilent`: a scheduled check found a source silent past its expected cadence and raised
 * the alert `alertId` (recorded in the same batch). Times are Vigil's record times, never a client's.
 */
export const SourceWentSilentSchema = v.strictObject({
  /** `adapter/instance`, or `collector:<id>`. */
  source: v.string(),
  kind: v.picklist(SOURCE_KINDS),
  /** When the source last reported (the record time of its last batch). */
  lastSeenAt: v.string(),
  /** The median gap between its recent reports, null when too few were seen to learn one. */
  usualCadenceMs: v.nullable(v.number()),
  /** How long a silence the check allowed before declaring this one. */
  thresholdMs: v.number(),
  alertId: v.string(),
});

/** `SourceResumed`: a silent source reported again; its alert was resolved in the same batch. */
export const SourceResumedSchema = v.strictObject({
  source: v.string(),
  /** When the source reported again. */
  resumedAt: v.string(),
  /** The `lastSeenAt` of the silence this ends. */
  silentSince: v.string(),
  alertId: v.string(),
});

/** `DiskWatermarkCrossed`: the store's free space crossed a watermark (either way), as sampled by the monitor. */
export const DiskWatermarkCrossedSchema = v.strictObject({
  from: v.picklist(DISK_LEVELS),
  to: v.picklist(DISK_LEVELS),
  freeBytes: v.number(),
  totalBytes: v.number(),
  /** The alert raised (to low or flood) or resolved (back to ok) in the same batch. */
  alertId: v.optional(v.string()),
});

/**
 * `WitnessRefused`: a witness the instance pushes its checkpoints to refused one as inconsistent with what it
 * cosigned before (a 422, or a 409 naming a size that cannot be reconciled), or answered a cosignature that does not
 * verify; the alert `alertId` was raised in the same batch (docs/log.md, "Witnesses").
 */
export const WitnessRefusedSchema = v.strictObject({
  /** The witness's key name. */
  witness: v.string(),
  /** Where it was asked (its submission prefix). */
  url: v.string(),
  /** The size of the instance's checkpoint it refused. */
  size: v.number(),
  /** The size the witness says it last cosigned, when it said one. */
  witnessSize: v.optional(v.number()),
  /** Its HTTP status (200 for a cosignature that does not verify). */
  status: v.number(),
  /** Why the instance counts the answer as a refusal. */
  reason: v.string(),
  /** The witness's answer, cut to 512 characters. */
  answer: v.string(),
  alertId: v.string(),
});

/** The self-monitoring events of the instance, by stored type name. */
export const MONITOR_EVENTS = {
  SourceWentSilent: SourceWentSilentSchema,
  SourceResumed: SourceResumedSchema,
  DiskWatermarkCrossed: DiskWatermarkCrossedSchema,
  WitnessRefused: WitnessRefusedSchema,
} as const;
