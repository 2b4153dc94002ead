import * as v from 'valibot';

/** Days a kind of record is kept, or null for ever. */
const Days = v.nullable(v.number());

/**
 * `RetentionPolicyRecorded`: the retention policy in force, recorded at start whenever it differs
 * from the last one recorded (docs/log.md, "Retention"), so every change of it is in the trail.
 */
export const RetentionPolicyRecordedSchema = v.strictObject({
  enabled: v.boolean(),
  days: v.strictObject({
    evidence: Days,
    alerts: Days,
    reviews: Days,
    incidents: Days,
    access: Days,
    audit: Days,
  }),
  segmentRecords: v.number(),
});

/** One record carried forward: the original exactly as it was stored, and the hash of its bytes. */
export const CarriedRecordSchema = v.strictObject({
  seq: v.number(),
  /** SHA-256 hex of the original's stored bytes (what the record after it links to). */
  hash: v.string(),
  at: v.string(),
  type: v.string(),
  actor: v.optional(v.strictObject({ id: v.string(), authentication: v.string() })),
  data: v.unknown(),
  prev: v.string(),
});

/**
 * `RecordsCarriedForward`: records of segments about to expire that their kind's policy keeps
 * longer (alerts, reviews, incidents, audit, setup and collector records), appended again before
 * the cut; each names its original seq and hash, so the chain is never rewritten.
 */
export const RecordsCarriedForwardSchema = v.strictObject({
  records: v.array(CarriedRecordSchema),
});

/** One archive file written by an expiry: the records `fromSeq`..`toSeq` and the checkpoint covering them. */
export const SegmentArchiveSchema = v.strictObject({
  /** The file's name inside `retention.archiveDir`. */
  file: v.string(),
  fromSeq: v.number(),
  toSeq: v.number(),
  /** SHA-256 hex of the whole file. */
  digest: v.string(),
  /** The tree size of the signed checkpoint inside the file. */
  checkpointSize: v.number(),
  /** Evidence of alerts that went into this archive (the alerts still read: their references are kept). */
  alertEvidence: v.optional(v.array(v.strictObject({ alertId: v.string(), eventIds: v.array(v.string()) }))),
});

/**
 * `LogSegmentsExpired`: the cut. Records before `firstSeq` were archived and removed from the live
 * store; `prevHash` is the chain hash at the cut (the hash of record firstSeq − 1, which record
 * firstSeq links to) and `treeRoot` the Merkle root of the first firstSeq − 1 records.
 */
export const LogSegmentsExpiredSchema = v.strictObject({
  firstSeq: v.number(),
  prevHash: v.string(),
  /** Base64 RFC 9162 root of the tree of firstSeq − 1 records. */
  treeRoot: v.string(),
  archives: v.array(SegmentArchiveSchema),
  /** The records' time before which the expired segments end (now − the evidence retention). */
  before: v.string(),
  carried: v.number(),
  dropped: v.number(),
  /**
   * Base64 roots of the complete subtrees of the first firstSeq − 1 records, largest first (RFC 9162
   * frontier; its root is `treeRoot`): a JetStream node that starts behind the purged prefix starts
   * its tree from them (docs/scale-out.md, "Retention"). Absent in cuts made before it existed.
   */
  treeFrontier: v.optional(v.array(v.string())),
});

/** The retention events of the instance, by stored type name. */
export const RETENTION_EVENTS = {
  RetentionPolicyRecorded: RetentionPolicyRecordedSchema,
  RecordsCarriedForward: RecordsCarriedForwardSchema,
  LogSegmentsExpired: LogSegmentsExpiredSchema,
} as const;
