import type { Hono } from 'hono';
import * as v from 'valibot';
import { stringify } from 'yaml';
import { decideImportRules, decideSetRuleEnabled } from '../../commands/import-rules.js';
import { detectionPlan } from '../../detection/plan.js';
import type { DetectionState, InstalledRule } from '../../projections/detection.js';
import type { SourcesState } from '../../projections/sources.js';
import { readBodyBytes } from '../body.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { guard } from '../guard.js';
import { executeAudited } from '../request-context.js';
import { readJsonBody } from '../body.js';

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

/** Rule routes (`/api/v1/rules`) and the detection plan. */
export function ruleRoutes(app: Hono<AppEnv>, deps: AppDeps, net: NetPolicy): void {
  const rules = () => deps.writer.models.state<DetectionState>('detection').rules;

  app.post('/api/v1/rules', guard(deps, net, '/api/v1/rules', 'import_rules', 'rules:write'), async (c) => {
    const type = c.req.header('content-type') ?? '';
    if (!YAML_TYPES.test(type)) throw new HttpError(415, 'expected Content-Type: application/yaml (a Sigma rule, a multi-document stream or a collection)');
    const text = Buffer.from(await readBodyBytes(c, deps.config.limits.bodyBytes)).toString('utf8');
    const { result } = await executeAudited(c, deps, (m) => decideImportRules(m, text, 'api'), 201);
    return c.json(result, 201);
  });

  app.get('/api/v1/rules', guard(deps, net, '/api/v1/rules', 'list_rules', 'rules:read'), (c) =>
    c.json({ rules: [...rules().values()].map(summary) }));

  app.get('/api/v1/rules/:id', guard(deps, net, '/api/v1/rules/{id}', 'read_rule', 'rules:read'), (c) => {
    const rule = rules().get(c.req.param('id'));
    if (!rule) throw new HttpError(404, `rule ${c.req.param('id').slice(0, 128)} is not installed`);
    const comp = rule.compiled;
    return c.json({
      ...summary(rule), description: comp.description ?? null, references: comp.references, falsepositives: comp.falsepositives, tags: comp.tags,
      ...(comp.kind === 'detection' ? { fields: comp.fields } : {}), ...(rule.importedBy ? { importedBy: rule.importedBy } : {}), text: stringify(rule.doc),
    });
  });

  app.patch('/api/v1/rules/:id', guard(deps, net, '/api/v1/rules/{id}', 'set_rule_enabled', 'rules:write'), async (c) => {
    const body = parseOr400(RulePatchBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const { result } = await executeAudited(c, deps, (m) => decideSetRuleEnabled(m, c.req.param('id'), body.enabled, body.reason), 200);
    return c.json(result, 200);
  });

  app.get('/api/v1/detection-plan', guard(deps, net, '/api/v1/detection-plan', 'read_detection_plan', 'plan:read'), (c) => {
    const m = deps.writer.models;
    return c.json(detectionPlan(m.state<DetectionState>('detection'), m.state<SourcesState>('sources'), deps.now(), deps.config.detection.freshnessHours));
  });
}
