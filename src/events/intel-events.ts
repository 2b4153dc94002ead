import * as v from 'valibot';

/** The kinds of value an indicator can name (src/detection/intel/types.ts). */
export const INDICATOR_TYPES = ['ipv4', 'ipv6', 'cidr', 'domain', 'url', 'md5', 'sha1', 'sha256', 'email'] as const;

/** The kinds of threat intelligence feed (docs/intel.md). */
export const FEED_KINDS = ['stix-bundle', 'taxii21', 'misp', 'list', 'posted'] as const;

/** One indicator as the log keeps it: the shape of src/detection/intel/types.ts `Indicator`. */
export const IndicatorSchema = v.strictObject({
  id: v.string(),
  anyOf: v.array(v.array(v.strictObject({ type: v.picklist(INDICATOR_TYPES), value: v.string() }))),
  validFrom: v.optional(v.string()),
  validUntil: v.optional(v.string()),
  revoked: v.optional(v.boolean()),
  confidence: v.optional(v.number()),
  name: v.optional(v.string()),
  labels: v.optional(v.array(v.string())),
  related: v.optional(v.array(v.strictObject({ type: v.string(), name: v.string(), id: v.optional(v.string()) }))),
  source: v.string(),
});

/** Indicators a reader could not use, as a feed's update lists them (with why). */
export const UnsupportedIndicatorSchema = v.strictObject({ id: v.string(), source: v.string(), reason: v.string() });

/**
 * `IntelIndicatorsChanged`: part of one fetch of a feed that changed its set: indicators added (a new id, or a new
 * version of one) and ids removed. One fetch writes as many as its size needs, then one `IntelFeedUpdated`.
 */
export const IntelIndicatorsChangedSchema = v.strictObject({
  feed: v.string(),
  version: v.string(),
  added: v.array(IndicatorSchema),
  removed: v.array(v.string()),
});

/**
 * `IntelFeedUpdated`: a fetch (or a posted bundle) that changed a feed, after its `IntelIndicatorsChanged`: its new
 * version (the digest of what was read), the counts, and what could not be used.
 */
export const IntelFeedUpdatedSchema = v.strictObject({
  feed: v.string(),
  kind: v.picklist(FEED_KINDS),
  version: v.string(),
  added: v.number(),
  removed: v.number(),
  /** Indicators of the feed whose `validUntil` had passed when it was fetched (kept: an old event still matches). */
  expired: v.number(),
  /** How many indicators the feed holds now. */
  total: v.number(),
  unsupported: v.array(UnsupportedIndicatorSchema),
  unsupportedCount: v.number(),
});

/** The threat intelligence events of the instance, by stored type name. */
export const INTEL_EVENTS = {
  IntelIndicatorsChanged: IntelIndicatorsChangedSchema,
  IntelFeedUpdated: IntelFeedUpdatedSchema,
} as const;
