import * as v from 'valibot';
import {
  ALERT_DISPOSITIONS,
  ALERT_STATUSES,
  CorrelationReasonSchema,
  IntelReasonSchema,
  EvidenceRefSchema,
  INCIDENT_STATUSES,
  MatchDetailSchema,
} from '../events/detection-events.js';

// The answers of the alert and incident routes, as alerts-query.ts shapes them: what docs/openapi.json
// publishes (tests/docs/openapi-responses.test.ts holds real answers to them).

const Count = v.pipe(v.number(), v.integer());
const Cursor = v.nullable(v.string());
const Who = { at: v.string(), seq: Count, principal: v.string(), authentication: v.string() };

const Review = {
  ...Who,
  from: v.string(),
  to: v.string(),
  reason: v.string(),
  disposition: v.optional(v.picklist(ALERT_DISPOSITIONS)),
  bulk: v.optional(v.boolean()),
};
const Assignment = { ...Who, from: v.optional(v.string()), to: v.optional(v.string()), reason: v.optional(v.string()) };
const Note = { ...Who, noteId: v.string(), text: v.string() };

/** One entry of an alert's timeline: a review, an assignment or a note. */
export const AlertTimelineEntrySchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('review'), ...Review }),
  v.strictObject({ kind: v.literal('assignment'), ...Assignment }),
  v.strictObject({ kind: v.literal('note'), ...Note }),
]);

/** The fields an alert has in a list and in its detail alike. */
const AlertFields = {
  id: v.string(),
  status: v.picklist(ALERT_STATUSES),
  ruleId: v.string(),
  groupKey: v.string(),
  title: v.string(),
  author: v.optional(v.string()),
  level: v.string(),
  severity: v.number(),
  confidence: v.number(),
  evidenceCount: Count,
  affectedSystems: v.array(v.string()),
  affectedSystemsCount: Count,
  affectedSystemsComplete: v.boolean(),
  firstSeen: v.string(),
  lastSeen: v.string(),
  tags: v.array(v.string()),
  attack: v.array(v.string()),
  retro: v.optional(v.literal(true)),
  incidentId: v.optional(v.string()),
  assignee: v.optional(v.string()),
  disposition: v.optional(v.picklist(ALERT_DISPOSITIONS)),
  /** Set when its rule suppressed by field values: the fields, their values and the end of its window. */
  suppression: v.optional(
    v.strictObject({
      by: v.array(v.string()),
      for: v.string(),
      forMs: Count,
      values: v.record(v.string(), v.unknown()),
      until: v.string(),
    }),
  ),
  /** With `suppression`: the matches the alert took, the one that raised it and those suppressed into it. */
  matchCount: v.optional(Count),
  /** With `suppression`: the matches folded into the alert instead of raising new alerts. */
  suppressedCount: v.optional(Count),
};

/** An alert in `GET /api/v1/alerts` (its first 20 affected systems, no evidence or history). */
export const AlertListItemSchema = v.strictObject(AlertFields);

/** `GET /api/v1/alerts`: a page of alerts and the cursor of the next. */
export const AlertPageSchema = v.strictObject({ alerts: v.array(AlertListItemSchema), nextCursor: Cursor });

/** `GET /api/v1/alerts/{alertId}`: the alert with its match reason, evidence and bounded histories. */
export const AlertDetailSchema = v.strictObject({
  ...AlertFields,
  matchReason: v.union([MatchDetailSchema, CorrelationReasonSchema, IntelReasonSchema]),
  evidence: v.array(
    v.strictObject({ ...EvidenceRefSchema.entries, archived: v.optional(v.strictObject({ file: v.string() })) }),
  ),
  reviewHistory: v.array(v.strictObject(Review)),
  assignmentHistory: v.array(v.strictObject(Assignment)),
  notes: v.array(v.strictObject(Note)),
  timeline: v.array(AlertTimelineEntrySchema),
  historyTotals: v.strictObject({ reviews: Count, assignments: Count, notes: Count, timeline: Count }),
});

/** One entry of an incident's timeline: `what` in words, the rest as data. */
export const IncidentTimelineEntrySchema = v.strictObject({
  at: v.string(),
  what: v.string(),
  kind: v.optional(v.string()),
  seq: v.optional(Count),
  alertId: v.optional(v.string()),
  principal: v.optional(v.string()),
  authentication: v.optional(v.string()),
  from: v.optional(v.string()),
  to: v.optional(v.string()),
  reason: v.optional(v.string()),
});

/** An alert as an incident lists it. */
export const IncidentAlertLineSchema = v.strictObject({
  id: v.string(),
  status: v.picklist(ALERT_STATUSES),
  title: v.string(),
  ruleId: v.string(),
  severity: v.number(),
  firstSeen: v.string(),
  lastSeen: v.string(),
  affectedSystems: v.array(v.string()),
  affectedSystemsCount: Count,
  affectedSystemsComplete: v.boolean(),
  assignee: v.optional(v.string()),
});

const IncidentFields = {
  id: v.string(),
  title: v.string(),
  origin: v.picklist(['correlated', 'promoted']),
  status: v.picklist([...INCIDENT_STATUSES, 'merged']),
  assignee: v.optional(v.string()),
  mergedInto: v.optional(v.string()),
  mergedFrom: v.array(v.string()),
  alertIds: v.array(v.string()),
  entities: v.array(v.string()),
  firstSeen: v.string(),
  lastSeen: v.string(),
  severity: v.number(),
  alertsOpen: Count,
  totals: v.strictObject({ alerts: Count, entities: Count, mergedFrom: Count, timeline: Count }),
};

/** `GET /api/v1/incidents`: incidents without their timelines, most recently active first. */
export const IncidentListSchema = v.array(v.strictObject(IncidentFields));

/** An incident as its detail shows it: bounded lists, rollup, and a line for each of its newest alerts. */
export const IncidentDetailSchema = v.strictObject({
  ...IncidentFields,
  timeline: v.array(IncidentTimelineEntrySchema),
  alerts: v.array(IncidentAlertLineSchema),
});

/** The answer of a review: the alert and its status now. */
export const AlertStatusAnswer = v.strictObject({ id: v.string(), status: v.picklist(ALERT_STATUSES) });

/** The answer of an assignment: the alert or incident and its assignee now (`null`: none). */
export const AssigneeAnswer = v.strictObject({ id: v.string(), assignee: v.nullable(v.string()) });

/** A page of one of an alert's or incident's lists: `{<owner>Id, [alongside], <field>, nextCursor}`. */
export function ownedPageSchema(
  idField: string,
  field: string,
  item: v.GenericSchema,
  alongside?: { readonly field: string; readonly schema: v.GenericSchema },
): v.GenericSchema {
  return v.strictObject({
    [idField]: v.string(),
    ...(alongside ? { [alongside.field]: alongside.schema } : {}),
    [field]: v.array(item),
    nextCursor: Cursor,
  });
}
