import * as v from 'valibot';
import { stringify } from 'yaml';
import { BULK_IMPORT_LIMITS, decideBulkImport, type RuleFile } from '../../commands/bulk-import-rules.js';
import { decideImportRules, decideSetRuleEnabled } from '../../commands/import-rules.js';
import { detectionPlan } from '../../alerting/plan.js';
import type { DetectionState, InstalledRule } from '../../projections/detection.js';
import type { SourcesState } from '../../projections/sources.js';
import { parseJsonBytes, readBodyBytes } from '../body.js';
import type { AppDeps } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { executeAudited } from '../request-context.js';
import { readJsonBody } from '../body.js';
import { route, type Route } from '../route.js';
import { detectionSlice } from '../../commands/slices.js';

/** Path of `/api/v1/rules/{id}`: a rule id (an unknown one is a 404). */
export const RuleIdParams = v.object({ id: v.string() });

/** Body of `PATCH /api/v1/rules/{id}`. */
export const RulePatchBody = v.strictObject({ enabled: v.boolean(), reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(4096))) });

const YAML_TYPES = /^(application\/(x-)?yaml|text\/(x-)?yaml|application\/yml)\b/i;

function summary(r: InstalledRule): Record<string, unknown> {
  const c = r.compiled;
  return {
    id: r.id, title: c.title, ...(c.author !== undefined ? { author: c.author } : {}), kind: c.kind, level: c.level, severity: c.severity,
    status: c.status ?? null, enabled: r.enabled, source: r.source, importedAt: r.importedAt,
    ...(c.kind === 'detection' ? { logsource: c.logsource } : { correlation: { type: c.type, rules: c.rules, groupBy: c.groupBy, timespanMs: c.timespanMs } }),
  };
}

/** Body of `POST /api/v1/rules/bulk` as JSON: the files of a rules directory (name relative to it, YAML text). */
export const BulkRulesBody = v.strictObject({
  files: v.pipe(v.array(v.strictObject({
    name: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
    text: v.string(),
  })), v.minLength(1), v.maxLength(BULK_IMPORT_LIMITS.files)),
});

/** The installed rules, as of every write acknowledged before the request. */
async function rules(deps: AppDeps): Promise<DetectionState['rules']> {
  await deps.readYourWrites();
  return deps.reads.state<DetectionState>('detection').rules;
}

const importRulesRoute = route({
  method: 'post', path: '/api/v1/rules', operationId: 'importRules',
  summary: 'Import Sigma rules: one rule, a multi-document stream or a collection (all or nothing)',
  permission: 'rules:write', audit: 'import_rules', body: { yaml: 'Sigma rule YAML' },
  success: { status: 201, description: '`{ruleIds}`' }, errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const type = c.req.header('content-type') ?? '';
    if (!YAML_TYPES.test(type)) throw new HttpError(415, 'expected Content-Type: application/yaml (a Sigma rule, a multi-document stream or a collection)');
    const text = Buffer.from(await readBodyBytes(c, deps.config.limits.bodyBytes)).toString('utf8');
    const { result } = await executeAudited(c, deps, (m) => decideImportRules(detectionSlice(m), text, 'api'), 201);
    return c.json(result, 201);
  },
});

const bulkImportRulesRoute = route({
  method: 'post', path: '/api/v1/rules/bulk', operationId: 'bulkImportRules',
  summary: 'Import a rules directory (JSON `{files: [{name, text}]}`) or a multi-document YAML stream (application/yaml): every valid rule is installed, each invalid document is listed with file, document, line and reason',
  permission: 'rules:write', audit: 'bulk_import_rules', body: { json: BulkRulesBody },
  success: { status: 201, description: '`{imported, ruleIds, blocked, blockedByLogsource, invalid}`' }, errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const type = c.req.header('content-type') ?? '';
    const bytes = await readBodyBytes(c, deps.config.limits.bodyBytes);
    let files: RuleFile[];
    if (YAML_TYPES.test(type)) files = [{ name: 'body', text: Buffer.from(bytes).toString('utf8') }];
    else if (/^application\/json\b/i.test(type)) files = parseOr400(BulkRulesBody, parseJsonBytes(bytes), 'body').files;
    else throw new HttpError(415, 'expected Content-Type: application/json ({files: [{name, text}]}) or application/yaml (a multi-document Sigma stream)');
    const { result } = await executeAudited(c, deps, (m) => decideBulkImport(detectionSlice(m), files, 'api'), 201);
    return c.json(result, 201);
  },
});

const listRulesRoute = route({
  method: 'get', path: '/api/v1/rules', operationId: 'listRules', summary: 'Installed rules with author, level, state and source',
  permission: 'rules:read', audit: 'list_rules',
  success: { status: 200, description: '`{rules}`' }, errors: [],
  handle: async (c, { deps }) =>
    c.json({ rules: [...(await rules(deps)).values()].map(summary) }),
});

const readRuleRoute = route({
  method: 'get', path: '/api/v1/rules/{id}', operationId: 'readRule', summary: 'One rule with its Sigma text',
  permission: 'rules:read', audit: 'read_rule', params: RuleIdParams,
  success: { status: 200, description: 'rule detail' }, errors: [404],
  handle: async (c, { deps }) => {
    const rule = (await rules(deps)).get(c.req.param('id'));
    if (!rule) throw new HttpError(404, `rule ${c.req.param('id').slice(0, 128)} is not installed`);
    const comp = rule.compiled;
    return c.json({
      ...summary(rule), description: comp.description ?? null, references: comp.references, falsepositives: comp.falsepositives, tags: comp.tags,
      ...(comp.kind === 'detection' ? { fields: comp.fields } : {}), ...(rule.importedBy ? { importedBy: rule.importedBy } : {}), text: stringify(rule.doc),
    });
  },
});

const setRuleEnabledRoute = route({
  method: 'patch', path: '/api/v1/rules/{id}', operationId: 'setRuleEnabled', summary: 'Enable or disable a rule',
  permission: 'rules:write', audit: 'set_rule_enabled', params: RuleIdParams, body: { json: RulePatchBody },
  success: { status: 200, description: '`{id, enabled}`' }, errors: [400, 404, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(RulePatchBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const { result } = await executeAudited(c, deps, (m) => decideSetRuleEnabled(detectionSlice(m), c.req.param('id'), body.enabled, body.reason), 200);
    return c.json(result, 200);
  },
});

const readDetectionPlanRoute = route({
  method: 'get', path: '/api/v1/detection-plan', operationId: 'readDetectionPlan',
  summary: 'Which rules can fire: ready, degraded or blocked, with the missing capabilities and their fixes',
  permission: 'plan:read', audit: 'read_detection_plan',
  success: { status: 200, description: 'DetectionPlan' }, errors: [],
  handle: async (c, { deps }) => {
    await deps.readYourWrites();
    const m = deps.reads;
    return c.json(detectionPlan(m.state<DetectionState>('detection'), m.state<SourcesState>('sources'), deps.now(), deps.config.detection.freshnessHours));
  },
});

/** Rule routes (`/api/v1/rules`) and the detection plan. */
export const ruleRoutes: readonly Route[] = [importRulesRoute, bulkImportRulesRoute, listRulesRoute, readRuleRoute, setRuleEnabledRoute, readDetectionPlanRoute];
