import { compileCorrelationSection } from './correlation-rule.js';
import { mapLogsource, type LogsourceMapping } from './logsources.js';
import { compileDetection } from './match.js';
import { readMeta, ruleLabel } from './meta.js';
import { documentSuppression } from './suppression.js';
import {
  fail,
  ok,
  type CompiledCorrelation,
  type CompiledRule,
  type Logsource,
  type Result,
  type RuleMeta,
} from './types.js';

export type { CompiledCorrelation, CompiledRule, CountCondition, Logsource, MatchDetail, RuleMeta } from './types.js';

/** What `compileSigma` answers: a compiled rule, or an error that names the rule and the problem. */
export type CompileResult =
  | { readonly ok: true; readonly rule: CompiledRule | CompiledCorrelation }
  | { readonly ok: false; readonly error: string };

/** The mapping of a logsource Vigil has no events for: no index keys (never tried), no aliases. */
const UNMAPPED: LogsourceMapping = { indexKeys: [], aliases: {} };

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function readLogsource(raw: unknown): Result<Logsource> {
  if (!isMap(raw)) return fail('logsource: expected a map with product, category and/or service');
  const out: Record<string, string> = {};
  for (const key of ['product', 'category', 'service'] as const) {
    const value = raw[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value === '' || value.length > 128)
      return fail(`logsource.${key}: expected a short string`);
    out[key] = value;
  }
  if (Object.keys(out).length === 0) return fail('logsource: needs a product, category or service');
  return ok(out);
}

function compileDetectionRule(doc: Record<string, unknown>, meta: RuleMeta): Result<CompiledRule> {
  if (doc['detection'] === undefined) return fail('missing detection');
  if (doc['logsource'] === undefined) return fail('missing logsource');
  const logsource = readLogsource(doc['logsource']);
  if (!logsource.ok) return fail(logsource.error);
  // A logsource no Vigil normalizer produces is no reason to refuse valid Sigma: the rule is checked
  // like any other, stored, and shown blocked in the detection plan with the source it waits for.
  const mapping = mapLogsource(logsource.value);
  const detection = compileDetection(doc['detection'], mapping.ok ? mapping.value : UNMAPPED);
  if (!detection.ok) return fail(detection.error);
  const { match, fields, triggers, backtracks } = detection.value;
  const unmapped = mapping.ok ? {} : { unmapped: mapping.error };
  return ok({
    ...meta,
    kind: 'detection',
    logsource: logsource.value,
    indexKeys: mapping.ok ? mapping.value.indexKeys : [],
    fields,
    match,
    ...(triggers ? { triggers } : {}),
    ...(backtracks ? { backtracks } : {}),
    ...unmapped,
  });
}

function compileDocument(doc: Record<string, unknown>): Result<CompiledRule | CompiledCorrelation> {
  if (doc['action'] !== undefined)
    return fail(`'action' belongs to a rule collection; parse the file with parseSigmaText first`);
  if (doc['filter'] !== undefined) return fail('Sigma filter documents are not supported');
  const meta = readMeta(doc);
  if (!meta.ok) return fail(meta.error);
  const rule =
    doc['correlation'] !== undefined
      ? compileCorrelationSection(doc, meta.value)
      : compileDetectionRule(doc, meta.value);
  if (!rule.ok) return rule;
  // Read once the rule is known: a correlation suppresses only by its group-by fields.
  const suppress = documentSuppression(doc, rule.value);
  if (!suppress.ok) return fail(suppress.error);
  return suppress.value ? ok({ ...rule.value, suppress: suppress.value }) : rule;
}

/** Compiles one parsed Sigma document (a detection or a correlation rule). Never throws. */
export function compileSigma(doc: unknown): CompileResult {
  if (!isMap(doc)) return { ok: false, error: 'Sigma document: expected a map' };
  const compiled = compileDocument(doc);
  return compiled.ok
    ? { ok: true, rule: compiled.value }
    : { ok: false, error: `${ruleLabel(doc)}: ${compiled.error}` };
}
