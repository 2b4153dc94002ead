import * as v from 'valibot';

const Seconds = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));
const Percent = v.pipe(v.number(), v.minValue(0), v.maxValue(100));
const FreeBytes = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(2 ** 53 - 1));
/** A source key (`adapter/instance` or `collector:<id>`), or a pattern of them with `*` wildcards. */
const SourcePattern = v.pipe(v.string(), v.minLength(1), v.maxLength(512));
const Clock = v.pipe(v.string(), v.regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (UTC)'));
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const Iso = v.pipe(v.string(), v.isoTimestamp('expected an ISO 8601 date-time with a zone'));

/** Hours of every week (UTC) during which the matching sources are expected to be quiet. */
export const QuietHoursSchema = v.strictObject({
  sources: v.pipe(v.array(SourcePattern), v.minLength(1), v.maxLength(256)),
  /** Start of the quiet time of day, UTC; `to` before `from` runs past midnight. */
  from: Clock,
  to: Clock,
  /** Days (UTC, of the quiet time's start) it applies on; every day when absent. */
  days: v.optional(v.pipe(v.array(v.picklist(DAYS)), v.minLength(1), v.maxLength(7))),
});

/** One declared silence: maintenance, a decommissioned source. */
export const ExpectedSilenceSchema = v.strictObject({
  sources: v.pipe(v.array(SourcePattern), v.minLength(1), v.maxLength(256)),
  from: v.optional(Iso),
  /** Absent: until the declaration is removed. */
  until: v.optional(Iso),
  reason: v.optional(v.pipe(v.string(), v.maxLength(1024))),
});

/** `monitoring`: the monitor monitoring itself (docs/monitoring.md). Reloaded on SIGHUP. */
export const MonitoringSchema = v.strictObject({
  /** How often the scheduler checks for silent sources and samples the disk. */
  checkSeconds: v.optional(Seconds(3600), 30),
  silence: v.optional(
    v.pipe(
      v.strictObject({
        enabled: v.optional(v.boolean(), true),
        /** A source is silent after `multiplier` times its usual cadence, never sooner than the floor... */
        floorSeconds: v.optional(Seconds(30 * 86_400), 300),
        /** ...and never later than the ceiling (also the threshold of a source whose cadence is not learned yet). */
        ceilingSeconds: v.optional(Seconds(30 * 86_400), 86_400),
        multiplier: v.optional(v.pipe(v.number(), v.minValue(1), v.maxValue(1000)), 4),
        /** Gaps between reports needed before a cadence is learned (the ceiling applies until then). */
        minSamples: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(32)), 3),
        /** A fixed threshold for particular sources, overriding the learned one. */
        sources: v.optional(
          v.pipe(
            v.record(SourcePattern, v.strictObject({ silentAfterSeconds: Seconds(30 * 86_400) })),
            v.check((r) => Object.keys(r).length <= 1024, 'at most 1024 entries'),
          ),
          {},
        ),
        quietHours: v.optional(v.pipe(v.array(QuietHoursSchema), v.maxLength(256)), []),
        expectedSilences: v.optional(v.pipe(v.array(ExpectedSilenceSchema), v.maxLength(1024)), []),
      }),
      v.check((s) => s.floorSeconds <= s.ceilingSeconds, 'floorSeconds must not exceed ceilingSeconds'),
    ),
    {},
  ),
  /**
   * Watermarks on the free space of the store's filesystem: a mark is past when either its bytes or its percent is. 0
   * disables one.
   */
  disk: v.optional(
    v.strictObject({
      lowFreeBytes: v.optional(FreeBytes, 1024 ** 3),
      lowFreePercent: v.optional(Percent, 10),
      floodFreeBytes: v.optional(FreeBytes, 256 * 1024 ** 2),
      floodFreePercent: v.optional(Percent, 2),
      /** The Retry-After of a write refused past the flood mark. */
      retryAfterSeconds: v.optional(Seconds(3600), 30),
    }),
    {},
  ),
});

/** The validated `monitoring` section. */
export type MonitoringSettings = v.InferOutput<typeof MonitoringSchema>;
/** The validated `monitoring.silence` section. */
export type SilenceSettings = MonitoringSettings['silence'];
/** The validated `monitoring.disk` section. */
export type DiskWatermarks = MonitoringSettings['disk'];

/** The defaults, for callers with no configuration. */
export const DEFAULT_MONITORING: MonitoringSettings = v.parse(MonitoringSchema, {});
