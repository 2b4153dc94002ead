import * as v from 'valibot';
import { NormalizedEventSchema } from '../../events/normalized-event.js';
import { PlanSummarySchema } from '../../projections/console-query.js';
import { PLAN_PROBLEMS, PLAN_STATES } from '../../projections/plan.js';

// The answers of the rule routes (rules.ts), as docs/openapi.json publishes them.

const Count = v.pipe(v.number(), v.integer());
/** Parts whose shape is the rule's own (a logsource, a quarantine, a match's detail): an object, described in words. */
const Described = (description: string) => v.pipe(v.looseObject({}), v.description(description));

const Summary = {
  id: v.string(),
  title: v.string(),
  author: v.optional(v.string()),
  kind: v.picklist(['detection', 'correlation']),
  level: v.string(),
  severity: v.number(),
  status: v.nullable(v.string()),
  enabled: v.boolean(),
  quarantine: v.optional(Described('why and when the rule was quarantined')),
  source: v.string(),
  importedAt: v.string(),
  logsource: v.optional(Described("a detection's Sigma logsource")),
  correlation: v.optional(
    v.strictObject({
      type: v.string(),
      rules: v.array(v.string()),
      groupBy: v.array(v.string()),
      timespanMs: v.number(),
    }),
  ),
};

/** A rule in `GET /api/v1/rules`: a detection has `logsource`, a correlation `correlation`. */
export const RuleSummarySchema = v.strictObject(Summary);

const Share = v.nullable(v.pipe(v.number(), v.minValue(0), v.maxValue(1)));

/**
 * A rule's quality from the analysts' own verdicts: alerts raised and reviewed, the latest disposition of each alert
 * counted and as a share of those that have one, the median time to first review and the matches exceptions kept.
 */
export const RuleQualitySchema = v.strictObject({
  alertsRaised: Count,
  alertsReviewed: Count,
  dispositions: v.strictObject({ true_positive: Count, benign: Count, false_positive: Count }),
  shares: v.strictObject({ true_positive: Share, benign: Share, false_positive: Share }),
  medianTimeToFirstReviewSeconds: v.nullable(v.number()),
  matchesExcepted: Count,
});

/** `GET /api/v1/rules/quality`: a page of rules with their quality, in the order asked for. */
export const RuleQualityPageSchema = v.strictObject({
  rules: v.array(
    v.strictObject({ ruleId: v.string(), title: v.string(), installed: v.boolean(), quality: RuleQualitySchema }),
  ),
  nextCursor: v.nullable(v.string()),
});

/** A rule's suppression in effect, and where it comes from (the API's setting carries who set it, when and why). */
const EffectiveSuppressionSchema = v.strictObject({
  source: v.picklist(['rule', 'api']),
  by: v.array(v.string()),
  for: v.string(),
  forMs: Count,
  reason: v.optional(v.string()),
  principal: v.optional(v.string()),
  at: v.optional(v.string()),
});

/**
 * `GET /api/v1/rules/{id}`: the summary, the rule's metadata, its cost on this node, its quality, its suppression and
 * its Sigma text.
 */
export const RuleDetailSchema = v.strictObject({
  ...Summary,
  description: v.nullable(v.string()),
  references: v.array(v.string()),
  falsepositives: v.array(v.string()),
  tags: v.array(v.string()),
  fields: v.optional(v.array(v.string())),
  importedBy: v.optional(v.string()),
  cost: v.strictObject({ evaluations: Count, matches: Count, ms: v.number(), since: v.nullable(v.string()) }),
  quality: RuleQualitySchema,
  /** The suppression in effect: the API's setting (`source: api`), else the document's `suppress:`, else null. */
  suppression: v.nullable(EffectiveSuppressionSchema),
  text: v.string(),
});

/** `PUT` and `DELETE /api/v1/rules/{id}/suppression`: the rule and the suppression now in effect. */
export const SuppressionAnswer = v.strictObject({
  id: v.string(),
  suppression: v.nullable(EffectiveSuppressionSchema),
});

/** `POST /api/v1/rules/bulk`: what was installed, what cannot fire yet, and each document refused. */
export const BulkImportAnswer = v.strictObject({
  imported: Count,
  ruleIds: v.array(v.string()),
  blocked: Count,
  blockedByLogsource: v.array(v.strictObject({ logsource: v.string(), rules: Count })),
  invalid: v.array(Described('a document refused: its file, document, line and reason')),
});

const Problem = v.picklist(PLAN_PROBLEMS);

const PlanEntry = v.looseObject({
  ruleId: v.string(),
  title: v.string(),
  author: v.optional(v.string()),
  enabled: v.boolean(),
  state: v.picklist(PLAN_STATES),
  problem: v.pipe(v.nullable(Problem), v.description('its worst problem; null when ready')),
  needs: v.pipe(v.nullable(v.string()), v.description('the `source` of its line in `fixes`; null when none')),
  tags: v.array(v.string()),
  requiredCapabilities: v.array(v.string()),
  missingCapabilities: v.array(
    v.strictObject({ capability: v.string(), problem: v.picklist(PLAN_PROBLEMS.slice(1)), fix: v.string() }),
  ),
  quarantine: v.optional(Described('why and when the rule was quarantined')),
});

/**
 * `GET /api/v1/detection-plan`: a page of the rules matching the filters, the summary and fixes of all of them,
 * and the self-monitoring entries (`builtin`).
 */
export const DetectionPlanAnswer = v.strictObject({
  generatedAt: v.string(),
  freshnessHours: v.number(),
  summary: v.strictObject({
    ...PlanSummarySchema.entries,
    byProblem: v.strictObject(Object.fromEntries(PLAN_PROBLEMS.map((p) => [p, Count])) as Record<string, typeof Count>),
    byMissingSource: v.pipe(
      v.record(v.string(), Count),
      v.description('enabled rules per source they wait for (`needs`), most first'),
    ),
  }),
  fixes: v.array(
    v.strictObject({
      source: v.string(),
      describe: v.string(),
      problem: v.picklist(['logsource_unsupported', 'no_source_connected', 'stale']),
      action: v.string(),
      doc: v.string(),
      rules: Count,
    }),
  ),
  rules: v.array(PlanEntry),
  nextCursor: v.nullable(v.string()),
  builtin: v.array(PlanEntry),
});

/** The rule previews: what the rules would have matched in the range, and whether all of it was scanned. */
export const PreviewAnswer = v.strictObject({
  ruleIds: v.array(v.string()),
  since: v.string(),
  until: v.string(),
  scanned: Count,
  matchCount: Count,
  matches: v.array(
    v.strictObject({
      ruleId: v.string(),
      kind: v.picklist(['detection', 'correlation']),
      time: v.string(),
      eventIds: v.array(v.string()),
      groupKey: v.string(),
      detail: Described('why it matched: the selections and fields, or the count over the window'),
      event: v.optional(NormalizedEventSchema),
    }),
  ),
  complete: v.boolean(),
  stoppedBy: v.optional(v.picklist(['events', 'time'])),
  resumeAfter: v.optional(v.string()),
});
