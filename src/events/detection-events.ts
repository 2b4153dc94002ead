import * as v from 'valibot';

/** Review statuses of spec 3.1. */
export const ALERT_STATUSES = ['open', 'in_review', 'dismissed'] as const;

/** What an analyst concluded about an alert when reviewing it (optional on a review). */
export const ALERT_DISPOSITIONS = ['true_positive', 'benign', 'false_positive'] as const;

/** Incident lifecycle statuses an analyst sets; `merged` is set only by a merge, and is final. */
export const INCIDENT_STATUSES = ['open', 'investigating', 'contained', 'closed'] as const;

/** Where rules come from: the built-in pack or an import through the API. */
export const RULE_SOURCES = ['builtin', 'api'] as const;

/**
 * `RulesImported`: Sigma rules imported (the full text, and each document as parsed), replacing rules with the same id.
 */
export const RulesImportedSchema = v.strictObject({
  source: v.picklist(RULE_SOURCES),
  packVersion: v.optional(v.string()),
  text: v.string(),
  rules: v.array(v.strictObject({ id: v.string(), doc: v.unknown() })),
});

/** `RuleEnabledChanged`: a rule switched on or off. */
export const RuleEnabledChangedSchema = v.strictObject({
  ruleId: v.string(),
  enabled: v.boolean(),
  reason: v.optional(v.string()),
});

/**
 * `RuleQuarantined`: a rule went over its time budget at run time and stopped evaluating until a
 * rule_admin enables it again (docs/detections.md "Rule budgets"): the budget, what it measured, the
 * event it was slowest on, and the alert raised for it.
 */
export const RuleQuarantinedSchema = v.strictObject({
  ruleId: v.string(),
  reason: v.string(),
  budgetMs: v.number(),
  measuredMs: v.number(),
  evaluations: v.number(),
  sampleEventId: v.optional(v.string()),
  alertId: v.string(),
});

/** A rule's suppression as recorded: the fields, the window as written and in milliseconds. */
export const SuppressSchema = v.strictObject({
  by: v.array(v.string()),
  for: v.string(),
  forMs: v.number(),
});

/**
 * `RuleSuppressionSet`: a rule_admin set a rule's alert suppression through the API, overriding the rule
 * document's own `suppress:`; without `suppress`, the setting was cleared (the document's own applies again).
 */
export const RuleSuppressionSetSchema = v.strictObject({
  ruleId: v.string(),
  suppress: v.optional(SuppressSchema),
  reason: v.string(),
  principal: v.string(),
  authentication: v.string(),
});

/** One rule hit offered to correlations: the rule, the event, its time and the fields correlations read. */
export const HitSchema = v.strictObject({
  ruleId: v.string(),
  ruleName: v.optional(v.string()),
  eventId: v.string(),
  /** The event time, milliseconds since the epoch. */
  timeMs: v.number(),
  /** The event's values of the fields the correlations group or count by. */
  values: v.record(v.string(), v.unknown()),
});

/**
 * `DetectionHitsRecorded`: the rule hits of one evaluation, so replay advances correlation windows
 * without re-running rules. Written since it replaced `DetectionHits`.
 */
export const DetectionHitsRecordedSchema = v.strictObject({
  hits: v.array(HitSchema),
});

/**
 * `DetectionHits` (legacy, no longer written): the hits of one evaluation with one-letter names,
 * `r` rule id, `n` rule name, `e` event id, `t` event time in ms, `v` field values. Read as
 * `DetectionHitsRecorded` (see upcast.ts).
 */
export const LegacyDetectionHitsSchema = v.strictObject({
  hits: v.array(
    v.strictObject({
      r: v.string(),
      n: v.optional(v.string()),
      e: v.string(),
      t: v.number(),
      v: v.record(v.string(), v.unknown()),
    }),
  ),
});

/** A reference to one piece of evidence of an alert; raw records stay local. */
export const EvidenceRefSchema = v.strictObject({
  eventId: v.string(),
  time: v.string(),
  summary: v.string(),
});

/** Why a detection rule matched: the selections, the field tests that held, the keywords. */
export const MatchDetailSchema = v.strictObject({
  selections: v.array(v.string()),
  fields: v.array(
    v.strictObject({ selection: v.string(), field: v.string(), modifiers: v.array(v.string()), value: v.unknown() }),
  ),
  keywords: v.array(v.string()),
});

/** Why a correlation fired. */
export const CorrelationReasonSchema = v.strictObject({
  correlation: v.string(),
  groupBy: v.record(v.string(), v.unknown()),
  value: v.number(),
  condition: v.record(v.string(), v.number()),
  field: v.optional(v.string()),
  rules: v.array(v.string()),
  timespan: v.string(),
});

/**
 * Why a threat intelligence alert was raised (docs/intel.md): the indicator, the feed and its version that said so,
 * its confidence and validity, the STIX objects it relates to, and the event fields that held its values.
 */
export const IntelReasonSchema = v.strictObject({
  intel: v.strictObject({
    indicator: v.string(),
    name: v.optional(v.string()),
    /** The STIX pattern or MISP attribute as the feed wrote it. */
    pattern: v.string(),
    feed: v.string(),
    version: v.string(),
    confidence: v.optional(v.number()),
    validFrom: v.optional(v.string()),
    validUntil: v.optional(v.string()),
    related: v.array(v.strictObject({ type: v.string(), name: v.string(), id: v.optional(v.string()) })),
    fields: v.array(v.strictObject({ field: v.string(), value: v.string(), type: v.string() })),
  }),
});

/** `AlertRaised`: a new alert, with everything its detail shows at the time it was raised. */
export const AlertRaisedSchema = v.strictObject({
  alertId: v.string(),
  ruleId: v.string(),
  groupKey: v.string(),
  title: v.string(),
  author: v.optional(v.string()),
  level: v.string(),
  severity: v.number(),
  confidence: v.number(),
  matchReason: v.union([MatchDetailSchema, CorrelationReasonSchema, IntelReasonSchema]),
  evidence: v.array(EvidenceRefSchema),
  affectedSystems: v.array(v.string()),
  firstSeen: v.string(),
  lastSeen: v.string(),
  tags: v.array(v.string()),
  /**
   * Added with suppression: set when the rule suppressed by field values; the alert's group key is made of
   * `values`, and matches with those values up to `until` (event time) grow this alert.
   */
  suppression: v.optional(
    v.strictObject({
      ...SuppressSchema.entries,
      values: v.record(v.string(), v.unknown()),
      until: v.string(),
    }),
  ),
  /** Added with suppression: matches folded into this alert by its suppression in the batch that raised it. */
  suppressed: v.optional(v.number()),
  /** Raised by a search of stored evidence for indicators added later (docs/intel.md "Back in time"). */
  retro: v.optional(v.literal(true)),
});

/** `AlertEvidenceAdded`: later matches of an open alert's rule and group key, added to it instead of a new alert. */
export const AlertEvidenceAddedSchema = v.strictObject({
  alertId: v.string(),
  evidence: v.array(EvidenceRefSchema),
  affectedSystems: v.array(v.string()),
  lastSeen: v.string(),
  confidence: v.number(),
  /** Added with suppression: how many matches of this record the alert's suppression folded into it. */
  suppressed: v.optional(v.number()),
});

/**
 * `AlertReviewed`: an analyst set an alert's status, with a reason; principal and authentication come from the request.
 */
export const AlertReviewedSchema = v.strictObject({
  alertId: v.string(),
  from: v.picklist(ALERT_STATUSES),
  to: v.picklist(ALERT_STATUSES),
  reason: v.string(),
  principal: v.string(),
  authentication: v.string(),
  /** Added with dispositions: older reviews carry none. */
  disposition: v.optional(v.picklist(ALERT_DISPOSITIONS)),
});

/** `AlertAssigned`: an alert's assignee set (`to`) or cleared (no `to`), by an authenticated principal. */
export const AlertAssignedSchema = v.strictObject({
  alertId: v.string(),
  from: v.optional(v.string()),
  to: v.optional(v.string()),
  reason: v.optional(v.string()),
  principal: v.string(),
  authentication: v.string(),
});

/** `AlertNoteAdded`: a free-text note on an alert, by an authenticated principal. */
export const AlertNoteAddedSchema = v.strictObject({
  alertId: v.string(),
  noteId: v.string(),
  text: v.string(),
  principal: v.string(),
  authentication: v.string(),
});

/**
 * `AlertsBulkReviewed`: many alerts reviewed in one action (one record), each with the status it
 * had; every alert still gets its own review-history entry. `filter` is the selection by filter, if
 * the alerts were chosen that way.
 */
export const AlertsBulkReviewedSchema = v.strictObject({
  reviews: v.array(v.strictObject({ alertId: v.string(), from: v.picklist(ALERT_STATUSES) })),
  to: v.picklist(ALERT_STATUSES),
  disposition: v.optional(v.picklist(ALERT_DISPOSITIONS)),
  reason: v.string(),
  filter: v.optional(v.record(v.string(), v.union([v.string(), v.number()]))),
  principal: v.string(),
  authentication: v.string(),
});

/** `IncidentOpened`: an incident opened, automatically (alerts sharing affected systems) or by an analyst. */
export const IncidentOpenedSchema = v.strictObject({
  incidentId: v.string(),
  title: v.string(),
  origin: v.picklist(['correlated', 'promoted']),
  reason: v.string(),
  alertIds: v.array(v.string()),
  principal: v.optional(v.string()),
  /** Added with the incident lifecycle: how the promoting principal authenticated. */
  authentication: v.optional(v.string()),
});

/** `IncidentAlertsAdded`: alerts joined an existing incident. */
export const IncidentAlertsAddedSchema = v.strictObject({
  incidentId: v.string(),
  alertIds: v.array(v.string()),
  reason: v.string(),
  /** Added with the incident lifecycle: the analyst who promoted the alerts into it (none when correlated). */
  principal: v.optional(v.string()),
  authentication: v.optional(v.string()),
});

/** `IncidentStatusChanged`: an analyst moved an incident through its lifecycle, with a reason. */
export const IncidentStatusChangedSchema = v.strictObject({
  incidentId: v.string(),
  from: v.picklist([...INCIDENT_STATUSES, 'merged']),
  to: v.picklist(INCIDENT_STATUSES),
  reason: v.string(),
  principal: v.string(),
  authentication: v.string(),
});

/** `IncidentAssigned`: an incident's assignee set (`to`) or cleared (no `to`). */
export const IncidentAssignedSchema = v.strictObject({
  incidentId: v.string(),
  from: v.optional(v.string()),
  to: v.optional(v.string()),
  reason: v.optional(v.string()),
  principal: v.string(),
  authentication: v.string(),
});

/**
 * `IncidentMerged`: one incident merged into another; its alerts (`alertIds`, at the time) moved there and it became
 * `merged`.
 */
export const IncidentMergedSchema = v.strictObject({
  incidentId: v.string(),
  into: v.string(),
  alertIds: v.array(v.string()),
  reason: v.string(),
  principal: v.string(),
  authentication: v.string(),
});

/** The detection events of the instance, by stored type name (`DetectionHits` is read as `DetectionHitsRecorded`). */
export const DETECTION_EVENTS = {
  RulesImported: RulesImportedSchema,
  RuleEnabledChanged: RuleEnabledChangedSchema,
  RuleQuarantined: RuleQuarantinedSchema,
  RuleSuppressionSet: RuleSuppressionSetSchema,
  DetectionHits: LegacyDetectionHitsSchema,
  DetectionHitsRecorded: DetectionHitsRecordedSchema,
  AlertRaised: AlertRaisedSchema,
  AlertEvidenceAdded: AlertEvidenceAddedSchema,
  AlertReviewed: AlertReviewedSchema,
  AlertAssigned: AlertAssignedSchema,
  AlertNoteAdded: AlertNoteAddedSchema,
  AlertsBulkReviewed: AlertsBulkReviewedSchema,
  IncidentOpened: IncidentOpenedSchema,
  IncidentAlertsAdded: IncidentAlertsAddedSchema,
  IncidentStatusChanged: IncidentStatusChangedSchema,
  IncidentAssigned: IncidentAssignedSchema,
  IncidentMerged: IncidentMergedSchema,
} as const;
