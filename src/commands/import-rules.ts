import { compileSigma, type CompileResult } from '../detection/compile.js';
import { unresolvedReferences } from '../detection/engine.js';
import { ruleLabel } from '../detection/meta.js';
import { exceededRuleLimit, type RuleLimits } from '../detection/rule-limits.js';
import { errorLine, parseSigmaText, type DocumentOrigin } from '../detection/sigma-yaml.js';
import type { CompiledSigma } from '../detection/types.js';
import {
  DetectionRecord,
  type RuleEnabledChanged,
  type RuleSource,
  type RulesImported,
} from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import type { DetectionState } from '../projections/detection.js';
import { RULE_QUARANTINED_RULE, systemResolution } from './system-alerts.js';
import { accept, reject, type Decision } from './decision.js';

/** Ids of the rules an import installed. */
export interface ImportResult {
  readonly ruleIds: string[];
}

/**
 * Decides a Sigma import (one rule, a multi-document stream or a collection): every document must
 * be within the rule limits and compile, and every correlation reference must name a rule of the
 * import or an installed one, or nothing is installed and each problem is named. The full text is
 * kept in the log.
 */
export function decideImportRules(
  detection: DetectionState,
  text: string,
  source: RuleSource,
  limits: RuleLimits,
  packVersion?: string,
): Decision<ImportResult> {
  const parsed = parseSigmaText(text);
  if (!parsed.ok) return reject('invalid', 'invalid Sigma YAML', { issues: [parsed.error] });
  if (parsed.docs.length === 0) return reject('invalid', 'no rule in the body');
  const issues: string[] = [];
  const compiled: Array<{ id: string; doc: unknown; rule: CompiledSigma }> = [];
  parsed.docs.forEach((doc, i) => {
    const r = compileWithinLimits(doc, limits);
    if (r.ok) compiled.push({ id: r.rule.id, doc, rule: r.rule });
    else issues.push(invalidDocument(doc, i, parsed.origins?.[i], r.error).text);
  });
  const ids = compiled.map((c) => c.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup) issues.push(`rule id ${dup} appears twice in the import`);
  if (issues.length > 0) return reject('invalid', 'invalid rules: nothing was imported', { issues });
  const installed = detection.rules;
  const combined = new Map([...installed.values()].map((r) => [r.id, r.compiled]));
  for (const c of compiled) combined.set(c.id, c.rule);
  const unresolved = unresolvedReferences([...combined.values()]).filter((u) => ids.includes(u.correlationId));
  if (unresolved.length > 0) {
    return reject('invalid', 'invalid rules: nothing was imported', {
      issues: unresolved.map(
        (u) =>
          `correlation ${u.correlationId} references ${u.reference}, which is neither in this import nor installed`,
      ),
    });
  }
  const data: RulesImported = {
    source,
    text,
    rules: compiled.map(({ id, doc }) => ({ id, doc })),
    ...(packVersion ? { packVersion } : {}),
  };
  return accept([{ type: DetectionRecord.RulesImported, data }], { ruleIds: ids });
}

/**
 * Compiles a document that is within the rule limits; one over a limit is refused uncompiled, naming
 * the rule (title and id) and the limit: `rule "T" (id): 80 regular expressions, more than ...`.
 */
export function compileWithinLimits(doc: unknown, limits: RuleLimits): CompileResult {
  const exceeded = exceededRuleLimit(doc, limits);
  if (exceeded === undefined) return compileSigma(doc);
  // Only a map has a detection section to exceed a limit with.
  const rule = doc as Record<string, unknown>;
  const id = rule['id'];
  const label = ruleLabel(rule);
  // The label is the title when there is one; the id beside it finds the rule in a large import.
  const named = label.startsWith('rule "') && typeof id === 'string' ? `${label} (${id.slice(0, 120)})` : label;
  return { ok: false, error: `${named}: ${exceeded}` };
}

/**
 * Decides switching a rule on or off. Enabling a quarantined rule lifts its quarantine: that needs
 * a reason, recorded with the change, and the quarantine's alert is dismissed with it in its history.
 */
export function decideSetRuleEnabled(
  models: { readonly detection: DetectionState; readonly alerts: AlertsState },
  ruleId: string,
  enabled: boolean,
  reason?: string,
): Decision<{ id: string; enabled: boolean }> {
  const rule = models.detection.rules.get(ruleId);
  if (!rule) return reject('not_found', `rule ${ruleId} is not installed`);
  const quarantine = enabled ? rule.quarantine : undefined;
  if (quarantine && !reason)
    return reject(
      'invalid',
      `rule ${ruleId} is quarantined (${quarantine.reason}); enabling it again needs a reason, ` +
        'recorded with the change',
    );
  const data: RuleEnabledChanged = { ruleId, enabled, ...(reason ? { reason } : {}) };
  const resolution = quarantine
    ? systemResolution(models.alerts, quarantine.alertId, RULE_QUARANTINED_RULE, `quarantine lifted: ${reason}`)
    : undefined;
  return accept(
    [
      { type: DetectionRecord.RuleEnabledChanged, data },
      ...(resolution ? [{ type: DetectionRecord.AlertReviewed, data: resolution }] : []),
    ],
    { id: ruleId, enabled },
  );
}

/** A refused document of an import: the issue text (document, line, error), its line and title. */
export function invalidDocument(
  doc: unknown,
  index: number,
  origin: DocumentOrigin | undefined,
  error: string,
): { text: string; line?: number; title?: string } {
  const line = origin ? errorLine(origin, error) : undefined;
  const title =
    doc && typeof doc === 'object' && typeof (doc as Record<string, unknown>)['title'] === 'string'
      ? String((doc as Record<string, unknown>)['title']).slice(0, 256)
      : undefined;
  // Compile errors already name the rule (`rule "X": ...`); the document and line say where it is.
  return {
    text: `document ${index + 1}${line !== undefined ? `, line ${line}` : ''}: ${error}`,
    ...(line !== undefined ? { line } : {}),
    ...(title !== undefined ? { title } : {}),
  };
}
