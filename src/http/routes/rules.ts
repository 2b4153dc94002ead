import * as v from 'valibot';
import { stringify } from 'yaml';
import { BULK_IMPORT_LIMITS, decideBulkImport, type RuleFile } from '../../commands/bulk-import-rules.js';
import { decideImportRules, decideSetRuleEnabled } from '../../commands/import-rules.js';
import { ClearSuppressionBody, decideSetRuleSuppression, SetSuppressionBody } from '../../commands/rule-suppression.js';
import { detectionPlan, planPage, PLAN_PAGE_SIZE, PLAN_PROBLEMS, PLAN_STATES } from '../../projections/plan.js';
import { effectiveSuppression, type DetectionState, type InstalledRule } from '../../projections/detection.js';
import type { SourcesState } from '../../projections/sources.js';
import { parseJsonBytes, readBodyBytes } from '../body.js';
import type { AppDeps } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { commandContext, executeAudited } from '../request-context.js';
import { readJsonBody } from '../body.js';
import { route, type Route } from '../route.js';
import { selfMonitoringPlan } from '../../services/monitoring/plan-entries.js';
import { MONITORING, type MonitoringState } from '../../projections/monitoring.js';
import { compileSigma } from '../../detection/compile.js';
import { createRuleSet } from '../../detection/engine.js';
import { ruleLabel } from '../../detection/meta.js';
import { parseSigmaText } from '../../detection/sigma-yaml.js';
import type { CompiledSigma } from '../../detection/types.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { epochMillisOf } from '../../kernel/time.js';
import { previewRuleSet } from '../../commands/alerting/rule-preview.js';
import { runPreview } from '../rule-previews.js';
import { QueryCursor, QueryLimit } from '../query.js';
import { storedJson } from '../stored-json.js';
import {
  BulkImportAnswer,
  DetectionPlanAnswer,
  PreviewAnswer,
  RuleDetailSchema,
  RuleQualityPageSchema,
  SuppressionAnswer,
  RuleSummarySchema,
} from './rule-answers.js';
import { listRuleQuality, qualityAnswer, RULE_QUALITY_SORTS } from '../../projections/rule-quality-query.js';

/** Path of `/api/v1/rules/{id}`: a rule id (an unknown one is a 404). */
export const RuleIdParams = v.object({ id: v.string() });

/** Body of `PATCH /api/v1/rules/{id}`. */
export const RulePatchBody = v.strictObject({
  enabled: v.boolean(),
  reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(4096))),
});

const YAML_TYPES = /^(application\/(x-)?yaml|text\/(x-)?yaml|application\/yml)\b/i;

function summary(r: InstalledRule): Record<string, unknown> {
  const c = r.compiled;
  return {
    id: r.id,
    title: c.title,
    ...(c.author !== undefined ? { author: c.author } : {}),
    kind: c.kind,
    level: c.level,
    severity: c.severity,
    status: c.status ?? null,
    enabled: r.enabled,
    ...(r.quarantine ? { quarantine: r.quarantine } : {}),
    source: r.source,
    importedAt: r.importedAt,
    ...(c.kind === 'detection'
      ? { logsource: c.logsource }
      : { correlation: { type: c.type, rules: c.rules, groupBy: c.groupBy, timespanMs: c.timespanMs } }),
  };
}

/**
 * What a rule has cost on this node since it started (`evaluations`, `matches`, `ms`, counted from
 * `since`); zeros for a rule not yet evaluated.
 */
export function ruleCostOf(deps: AppDeps, ruleId: string): Record<string, unknown> {
  const cost = deps.ruleCosts?.of(ruleId);
  return {
    evaluations: cost?.evaluations ?? 0,
    matches: cost?.matches ?? 0,
    ms: Math.round((cost?.ms ?? 0) * 1000) / 1000,
    since: deps.ruleCosts?.since ?? null,
  };
}

/** Body of `POST /api/v1/rules/bulk` as JSON: the files of a rules directory (name relative to it, YAML text). */
export const BulkRulesBody = v.strictObject({
  files: v.pipe(
    v.array(
      v.strictObject({
        name: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
        text: v.string(),
      }),
    ),
    v.minLength(1),
    v.maxLength(BULK_IMPORT_LIMITS.files),
  ),
});

/** The installed rules, as of every write acknowledged before the request. */
async function rules(deps: AppDeps): Promise<DetectionState['rules']> {
  await deps.readYourWrites();
  return deps.reads.detection.rules;
}

const importRulesRoute = route({
  method: 'post',
  path: '/api/v1/rules',
  operationId: 'importRules',
  summary: 'Import Sigma rules: one rule, a multi-document stream or a collection (all or nothing)',
  permission: 'rules:write',
  audit: 'import_rules',
  body: { yaml: 'Sigma rule YAML' },
  success: { status: 201, description: '`{ruleIds}`', schema: v.strictObject({ ruleIds: v.array(v.string()) }) },
  errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const type = c.req.header('content-type') ?? '';
    if (!YAML_TYPES.test(type))
      throw new HttpError(
        415,
        'expected Content-Type: application/yaml (a Sigma rule, a multi-document stream or a collection)',
      );
    const text = Buffer.from(await readBodyBytes(c, deps.config.limits.bodyBytes)).toString('utf8');
    const limits = deps.config.detection.limits;
    const { result } = await executeAudited(c, deps, (m) => decideImportRules(m.detection, text, 'api', limits), 201);
    return c.json(result, 201);
  },
});

const bulkImportRulesRoute = route({
  method: 'post',
  path: '/api/v1/rules/bulk',
  operationId: 'bulkImportRules',
  summary:
    'Import a rules directory (JSON `{files: [{name, text}]}`) or a multi-document YAML stream (application/yaml): ' +
    'every valid rule is installed, each invalid document is listed with file, document, line and reason',
  permission: 'rules:write',
  audit: 'bulk_import_rules',
  body: { json: BulkRulesBody },
  success: {
    status: 201,
    description: '`{imported, ruleIds, blocked, blockedByLogsource, invalid}`',
    schema: BulkImportAnswer,
  },
  errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const type = c.req.header('content-type') ?? '';
    const bytes = await readBodyBytes(c, deps.config.limits.bodyBytes);
    let files: RuleFile[];
    if (YAML_TYPES.test(type)) files = [{ name: 'body', text: Buffer.from(bytes).toString('utf8') }];
    else if (/^application\/json\b/i.test(type)) files = parseOr400(BulkRulesBody, parseJsonBytes(bytes), 'body').files;
    else
      throw new HttpError(
        415,
        'expected Content-Type: application/json ({files: [{name, text}]}) or application/yaml (a multi-document ' +
          'Sigma stream)',
      );
    const limits = deps.config.detection.limits;
    const { result } = await executeAudited(c, deps, (m) => decideBulkImport(m.detection, files, 'api', limits), 201);
    return c.json(result, 201);
  },
});

const listRulesRoute = route({
  method: 'get',
  path: '/api/v1/rules',
  operationId: 'listRules',
  summary: 'Installed rules with author, level, state and source',
  permission: 'rules:read',
  audit: 'list_rules',
  success: { status: 200, description: '`{rules}`', schema: v.strictObject({ rules: v.array(RuleSummarySchema) }) },
  errors: [],
  handle: async (c, { deps }) => c.json({ rules: [...(await rules(deps)).values()].map(summary) }),
});

const readRuleRoute = route({
  method: 'get',
  path: '/api/v1/rules/{id}',
  operationId: 'readRule',
  summary: 'One rule with its Sigma text',
  permission: 'rules:read',
  audit: 'read_rule',
  params: RuleIdParams,
  success: { status: 200, description: 'rule detail', schema: RuleDetailSchema },
  errors: [404],
  handle: async (c, { deps }) => {
    const rule = (await rules(deps)).get(c.req.param('id'));
    if (!rule) throw new HttpError(404, `rule ${c.req.param('id').slice(0, 128)} is not installed`);
    const comp = rule.compiled;
    return c.json({
      ...summary(rule),
      description: comp.description ?? null,
      references: comp.references,
      falsepositives: comp.falsepositives,
      tags: comp.tags,
      ...(comp.kind === 'detection' ? { fields: comp.fields } : {}),
      ...(rule.importedBy ? { importedBy: rule.importedBy } : {}),
      cost: ruleCostOf(deps, rule.id),
      quality: qualityAnswer(deps.reads.ruleQuality.rules.get(rule.id)),
      suppression: effectiveSuppression(rule) ?? null,
      text: stringify(rule.doc),
    });
  },
});

/** Query of `GET /api/v1/rules/quality`: the order, and the page. */
export const RuleQualityQuery = v.strictObject({
  /** `noisiest` (default): most alerts raised, then the highest false_positive+benign share. */
  sort: v.optional(v.picklist(RULE_QUALITY_SORTS)),
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
});

const listRuleQualityRoute = route({
  method: 'get',
  path: '/api/v1/rules/quality',
  operationId: 'listRuleQuality',
  summary:
    "Rules by the analysts' verdicts on their alerts: alerts raised and reviewed, dispositions and their shares, " +
    'median time to first review, matches excepted; noisiest first',
  permission: 'rules:read',
  audit: 'list_rule_quality',
  query: RuleQualityQuery,
  success: { status: 200, description: '`{rules, nextCursor}`', schema: RuleQualityPageSchema },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(RuleQualityQuery, c.req.query(), 'query');
    const installed = await rules(deps);
    const limit = Math.min(q.limit ?? 100, deps.config.limits.pageSize);
    const page = listRuleQuality(deps.reads.ruleQuality, installed, q.sort ?? 'noisiest', limit, q.cursor);
    if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    return c.json(page);
  },
});

const setRuleEnabledRoute = route({
  method: 'patch',
  path: '/api/v1/rules/{id}',
  operationId: 'setRuleEnabled',
  summary: 'Enable or disable a rule',
  permission: 'rules:write',
  audit: 'set_rule_enabled',
  params: RuleIdParams,
  body: { json: RulePatchBody },
  success: {
    status: 200,
    description: '`{id, enabled}`',
    schema: v.strictObject({ id: v.string(), enabled: v.boolean() }),
  },
  errors: [400, 404, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(RulePatchBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const { result } = await executeAudited(
      c,
      deps,
      (m) => decideSetRuleEnabled(m, c.req.param('id'), body.enabled, body.reason),
      200,
    );
    return c.json(result, 200);
  },
});

/** Sets (`SetSuppressionBody`) or clears (`ClearSuppressionBody`) a rule's suppression: one decider for both. */
function suppressionHandler(schema: typeof SetSuppressionBody | typeof ClearSuppressionBody): Route['handle'] {
  return async (c, { deps }) => {
    const body = parseOr400(schema, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const id = c.req.param('id')!;
    const { result } = await executeAudited(c, deps, (m) => decideSetRuleSuppression(m.detection, id, body, ctx), 200);
    return c.json(result, 200);
  };
}

const setRuleSuppressionRoute = route({
  method: 'put',
  path: '/api/v1/rules/{id}/suppression',
  operationId: 'setRuleSuppression',
  summary:
    "Set a rule's alert suppression (`{by, for, reason}`): within `for` of an alert, matches with the same values of " +
    "the `by` fields grow it instead of raising new alerts; overrides the rule document's own `suppress:`",
  permission: 'rules:write',
  audit: 'set_rule_suppression',
  params: RuleIdParams,
  body: { json: SetSuppressionBody },
  success: { status: 200, description: '`{id, suppression}`', schema: SuppressionAnswer },
  errors: [400, 404, 415],
  handle: suppressionHandler(SetSuppressionBody),
});

const clearRuleSuppressionRoute = route({
  method: 'delete',
  path: '/api/v1/rules/{id}/suppression',
  operationId: 'clearRuleSuppression',
  summary:
    "Clear the suppression set through the API (`{reason}`): the rule document's own `suppress:`, if any, " +
    'applies again',
  permission: 'rules:write',
  audit: 'clear_rule_suppression',
  params: RuleIdParams,
  body: { json: ClearSuppressionBody },
  success: { status: 200, description: '`{id, suppression}`', schema: SuppressionAnswer },
  errors: [400, 404, 415],
  handle: suppressionHandler(ClearSuppressionBody),
});

/** Query of `GET /api/v1/detection-plan`: a page (`limit`, `cursor`) and the filters, every one bounded. */
export const DetectionPlanQuery = v.strictObject({
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
  state: v.optional(v.picklist(PLAN_STATES)),
  problem: v.optional(v.picklist(PLAN_PROBLEMS)),
  source: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(512))),
  tag: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  text: v.optional(v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(256))),
});

const readDetectionPlanRoute = route({
  method: 'get',
  path: '/api/v1/detection-plan',
  operationId: 'readDetectionPlan',
  summary:
    'Which rules can fire (ready, degraded, blocked, quarantined), a page at a time and filtered, with the summary ' +
    'and the fixes grouped by the source they need',
  permission: 'plan:read',
  audit: 'read_detection_plan',
  query: DetectionPlanQuery,
  success: {
    status: 200,
    description: '`{generatedAt, freshnessHours, summary, fixes, rules, nextCursor, builtin}`',
    schema: DetectionPlanAnswer,
  },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(DetectionPlanQuery, c.req.query(), 'query');
    await deps.readYourWrites();
    const m = deps.reads;
    const plan = detectionPlan(m.detection, m.sources, deps.now(), deps.config.detection.freshnessHours);
    const { limit, cursor, ...filter } = q;
    const page = planPage(plan, filter, Math.min(limit ?? PLAN_PAGE_SIZE, deps.config.limits.pageSize), cursor);
    if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    return c.json({
      ...page,
      builtin: selfMonitoringPlan(deps.monitor?.settings() ?? deps.config.monitoring, m.monitoring),
    });
  },
});

/** Query of the rule previews: the time range, how many matches to return, how many events to read. */
export const PreviewQuery = v.strictObject({
  since: IsoDateTime,
  until: v.optional(IsoDateTime),
  limit: v.optional(QueryLimit),
  maxEvents: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,7}$/, 'expected an integer 1..1000000'),
      v.transform(Number),
      v.minValue(1),
      v.maxValue(1_000_000),
    ),
  ),
});

/**
 * A rule to preview: as compiled here (to check it and resolve its references), and its document (what the preview's
 * worker compiles).
 */
interface PreviewedRule {
  readonly compiled: CompiledSigma;
  readonly doc: unknown;
}

/** Compiles the Sigma text of a preview; a 400 names every document that does not compile. */
function compilePreviewText(text: string): PreviewedRule[] {
  const parsed = parseSigmaText(text);
  if (!parsed.ok) throw new HttpError(400, 'invalid Sigma YAML', [parsed.error]);
  if (parsed.docs.length === 0) throw new HttpError(400, 'no rule in the body');
  const issues: string[] = [];
  const out: PreviewedRule[] = [];
  parsed.docs.forEach((doc, i) => {
    const r = compileSigma(doc);
    if (r.ok) out.push({ compiled: r.rule, doc });
    else {
      const label = doc && typeof doc === 'object' ? ` (${ruleLabel(doc as Record<string, unknown>)})` : '';
      issues.push(`document ${i + 1}${label}: ${r.error}`);
    }
  });
  if (issues.length > 0) throw new HttpError(400, 'invalid rules: nothing was previewed', issues);
  return out;
}

/**
 * Runs `previewed` over the stored events of the query's range (read-your-writes), raising nothing.
 * The rules are evaluated in a worker thread (src/commands/alerting/preview-evaluator.ts), so a regular
 * expression that backtracks without end holds that worker until the preview's time is up, not
 * the service.
 */
async function preview(
  c: Parameters<Route['handle']>[0],
  deps: AppDeps,
  previewed: PreviewedRule[],
): Promise<Response> {
  const q = parseOr400(PreviewQuery, c.req.query(), 'query');
  const until = q.until ?? deps.now().toISOString();
  const sinceMs = epochMillisOf(q.since)!;
  const untilMs = epochMillisOf(until)!;
  if (untilMs < sinceMs) throw new HttpError(400, 'invalid query', ['until: before since']);
  const installed = await rules(deps);
  const set = previewRuleSet(
    previewed.map((r) => r.compiled),
    new Map([...installed.values()].map((r) => [r.id, r.compiled])),
  );
  const ids = previewed.map((r) => r.compiled.id);
  const unresolved = createRuleSet(set).unresolved.filter((u) => ids.includes(u.correlationId));
  if (unresolved.length > 0)
    throw new HttpError(
      400,
      'invalid rules: nothing was previewed',
      unresolved.map(
        (u) =>
          `correlation ${u.correlationId} references ${u.reference}, which is neither in this preview nor installed`,
      ),
    );
  const docs = new Map<string, unknown>(previewed.map((r) => [r.compiled.id, r.doc]));
  const result = await runPreview(
    deps,
    set,
    (r) => docs.get(r.id) ?? installed.get(r.id)!.doc,
    ids,
    { since: q.since, until, sinceMs, untilMs },
    { maxEvents: q.maxEvents ?? 100_000, maxMatches: q.limit ?? 100 },
  );
  // Matched events are served as stored: storedJson bounds the nesting of old records.
  return storedJson(c, result);
}

const previewRulesRoute = route({
  method: 'post',
  path: '/api/v1/rules/preview',
  operationId: 'previewRules',
  summary:
    'Retro-hunt: what Sigma rules (not imported) would have matched in stored events of a time range; raises nothing',
  permission: 'events:read',
  audit: 'preview_rules',
  query: PreviewQuery,
  body: { yaml: 'Sigma rule YAML (one rule, a multi-document stream or a collection)' },
  success: {
    status: 200,
    description: '`{ruleIds, since, until, scanned, matchCount, matches, complete, stoppedBy?, resumeAfter?}`',

    schema: PreviewAnswer,
  },
  errors: [400, 413, 415, 429],
  handle: async (c, { deps }) => {
    if (!YAML_TYPES.test(c.req.header('content-type') ?? ''))
      throw new HttpError(
        415,
        'expected Content-Type: application/yaml (a Sigma rule, a multi-document stream or a collection)',
      );
    const text = Buffer.from(await readBodyBytes(c, deps.config.limits.bodyBytes)).toString('utf8');
    return preview(c, deps, compilePreviewText(text));
  },
});

const previewRuleRoute = route({
  method: 'get',
  path: '/api/v1/rules/{id}/preview',
  operationId: 'previewRule',
  summary:
    'Retro-hunt: what an installed rule (enabled or not) would have matched in stored events of a time range; raises ' +
    'nothing',
  permission: 'events:read',
  audit: 'preview_rule',
  params: RuleIdParams,
  query: PreviewQuery,
  success: {
    status: 200,
    description: '`{ruleIds, since, until, scanned, matchCount, matches, complete, stoppedBy?, resumeAfter?}`',

    schema: PreviewAnswer,
  },
  errors: [400, 404, 429],
  handle: async (c, { deps }) => {
    const rule = (await rules(deps)).get(c.req.param('id'));
    if (!rule) throw new HttpError(404, `rule ${c.req.param('id').slice(0, 128)} is not installed`);
    return preview(c, deps, [{ compiled: rule.compiled, doc: rule.doc }]);
  },
});

/** Rule routes (`/api/v1/rules`), their previews and the detection plan. */
export const ruleRoutes: readonly Route[] = [
  importRulesRoute,
  bulkImportRulesRoute,
  listRulesRoute,
  // Before the rule detail: `/rules/quality` is this list, never a rule whose id is `quality`.
  listRuleQualityRoute,
  readRuleRoute,
  setRuleEnabledRoute,
  setRuleSuppressionRoute,
  clearRuleSuppressionRoute,
  readDetectionPlanRoute,
  previewRulesRoute,
  previewRuleRoute,
];
