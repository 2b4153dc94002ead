import * as v from 'valibot';

/** Days a kind of record is kept (fractions allowed), or null: kept for ever. */
const Days = (fallback: number) =>
  v.optional(v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(36_500))), fallback);

/** Records per segment: a multiple of 256, so a cut falls on a stored Merkle tile boundary. */
const SegmentRecords = v.pipe(
  v.number(),
  v.integer(),
  v.minValue(256),
  v.maxValue(16_777_216),
  v.check((n) => n % 256 === 0, 'expected a multiple of 256'),
);

/** `retention` in the configuration (docs/configuration.md, docs/log.md "Retention"). */
export const RetentionSchema = v.strictObject({
  /** Off by default: nothing leaves the live store unless the operator turns retention on. */
  enabled: v.optional(v.boolean(), false),
  /** Raw and normalized evidence (ingested, submitted and raw records, detection hits). */
  evidenceDays: Days(30),
  alertsDays: Days(365),
  reviewsDays: Days(365),
  incidentsDays: Days(365),
  /** Access records and refusals. */
  accessDays: Days(365),
  /** API audit records, credential changes, console sessions. */
  auditDays: Days(730),
  segmentRecords: v.optional(SegmentRecords, 1_048_576),
  /** Where archive files go (absolute); default `<storage.path>/archive`. */
  archiveDir: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(4096),
      v.check((p) => p.startsWith('/'), 'expected an absolute path'),
    ),
  ),
  /** How often `vigil serve` checks for segments to expire. */
  checkSeconds: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(86_400)), 300),
});

/** The validated retention settings. */
export type RetentionSettings = v.InferOutput<typeof RetentionSchema>;

/** Defaults, as the schema fills them in. */
export const DEFAULT_RETENTION: RetentionSettings = v.parse(RetentionSchema, {});
