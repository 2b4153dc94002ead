import { compileSigma } from '../detection/compile.js';
import { createRuleSet } from '../detection/engine.js';
import { ruleLabel } from '../detection/meta.js';
import { errorLine, parseSigmaText, type DocumentOrigin } from '../detection/sigma-yaml.js';
import { describeLogsource } from '../detection/logsources.js';
import type { CompiledSigma } from '../detection/types.js';
import { DetectionRecord, type RuleEnabledChanged, type RuleSource, type RulesImported } from '../events/detection-records.js';
import type { DetectionState } from '../projections/detection.js';
import { accept, reject, type Decision } from './decision.js';

/** Ids of the rules an import installed. */
export interface ImportResult {
  readonly ruleIds: string[];
}

/**
 * Decides a Sigma import (one rule, a multi-document stream or a collection): every document must
 * compile and every correlation reference must name a rule of the import or an installed one, or
 * nothing is installed and each problem is named. The full text is kept in the log.
 */
export function decideImportRules(detection: DetectionState, text: string, source: RuleSource, packVersion?: string): Decision<ImportResult> {
  const parsed = parseSigmaText(text);
  if (!parsed.ok) return reject('invalid', 'invalid Sigma YAML', { issues: [parsed.error] });
  if (parsed.docs.length === 0) return reject('invalid', 'no rule in the body');
  const issues: string[] = [];
  const compiled: Array<{ id: string; doc: unknown; rule: CompiledSigma }> = [];
  parsed.docs.forEach((doc, i) => {
    const r = compileSigma(doc);
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
  const unresolved = createRuleSet([...combined.values()]).unresolved.filter((u) => ids.includes(u.correlationId));
  if (unresolved.length > 0) {
    return reject('invalid', 'invalid rules: nothing was imported', { issues: unresolved.map((u) => `correlation ${u.correlationId} references ${u.reference}, which is neither in this import nor installed`) });
  }
  const data: RulesImported = { source, text, rules: compiled.map(({ id, doc }) => ({ id, doc })), ...(packVersion ? { packVersion } : {}) };
  return accept([{ type: DetectionRecord.RulesImported, data }], { ruleIds: ids });
}

/** Decides switching a rule on or off. */
export function decideSetRuleEnabled(detection: DetectionState, ruleId: string, enabled: boolean, reason?: string): Decision<{ id: string; enabled: boolean }> {
  const rule = detection.rules.get(ruleId);
  if (!rule) return reject('not_found', `rule ${ruleId} is not installed`);
  const data: RuleEnabledChanged = { ruleId, enabled, ...(reason !== undefined ? { reason } : {}) };
  return accept([{ type: DetectionRecord.RuleEnabledChanged, data }], { id: ruleId, enabled });
}

/** One document a bulk import refused: where it is and why. */
export interface InvalidRule {
  readonly file: string;
  readonly document?: number;
  readonly line?: number;
  readonly title?: string;
  readonly error: string;
}

/** What a bulk import did: counts, the rules waiting for a source by logsource, and every refusal. */
export interface BulkImportResult {
  readonly imported: number;
  readonly ruleIds: string[];
  readonly blocked: number;
  readonly blockedByLogsource: Array<{ logsource: string; rules: number }>;
  readonly invalid: InvalidRule[];
}

/** One file of a bulk import (a file of a rules directory, or the whole YAML body). */
export interface RuleFile {
  readonly name: string;
  readonly text: string;
}

/** Bounds on a bulk import: files per request (the body size is bounded by `limits.bodyBytes`). */
export const BULK_IMPORT_LIMITS = { files: 5000 } as const;

function invalidDocument(doc: unknown, index: number, origin: DocumentOrigin | undefined, error: string): { text: string; line?: number; title?: string } {
  const line = origin ? errorLine(origin, error) : undefined;
  const title = doc && typeof doc === 'object' && typeof (doc as Record<string, unknown>)['title'] === 'string' ? String((doc as Record<string, unknown>)['title']).slice(0, 256) : undefined;
  // Compile errors already name the rule (`rule "X": ...`); the document and line say where it is.
  return { text: `document ${index + 1}${line !== undefined ? `, line ${line}` : ''}: ${error}`, ...(line !== undefined ? { line } : {}), ...(title !== undefined ? { title } : {}) };
}

/**
 * Decides a bulk import (a rules directory, or a multi-document YAML): every valid rule is installed,
 * those whose logsource no normalizer produces included (they wait, blocked, in the plan); each
 * document that is not valid Sigma is refused on its own, named by file, document and line. Nothing
 * valid is held back by an invalid neighbour. Correlations must reference installed or imported rules.
 */
export function decideBulkImport(detection: DetectionState, files: readonly RuleFile[], source: RuleSource): Decision<BulkImportResult> {
  if (files.length === 0) return reject('invalid', 'no rule file in the body');
  if (files.length > BULK_IMPORT_LIMITS.files) return reject('invalid', `more than ${BULK_IMPORT_LIMITS.files} files in one import`);
  const invalid: InvalidRule[] = [];
  const compiled: Array<{ id: string; doc: unknown; rule: CompiledSigma; file: string; index: number }> = [];
  const texts: string[] = [];
  for (const file of files) {
    const parsed = parseSigmaText(file.text);
    if (!parsed.ok) { invalid.push({ file: file.name, error: parsed.error }); continue; }
    let used = false;
    parsed.docs.forEach((doc, i) => {
      const r = compileSigma(doc);
      if (r.ok) { compiled.push({ id: r.rule.id, doc, rule: r.rule, file: file.name, index: i }); used = true; return; }
      const refused = invalidDocument(doc, i, parsed.origins?.[i], r.error);
      invalid.push({ file: file.name, document: i + 1, ...(refused.line !== undefined ? { line: refused.line } : {}), ...(refused.title !== undefined ? { title: refused.title } : {}), error: r.error });
    });
    if (used) texts.push(file.text.trim());
  }
  const firstOf = new Map<string, string>();
  const unique = compiled.filter((c) => {
    const seen = firstOf.get(c.id);
    if (seen === undefined) { firstOf.set(c.id, c.file); return true; }
    invalid.push({ file: c.file, document: c.index + 1, error: `rule id ${c.id} appears twice in the import (first in ${seen})` });
    return false;
  });
  const combined = new Map([...detection.rules.values()].map((r) => [r.id, r.compiled]));
  for (const c of unique) combined.set(c.id, c.rule);
  const importedIds = new Set(unique.map((c) => c.id));
  const unresolved = createRuleSet([...combined.values()]).unresolved.filter((u) => importedIds.has(u.correlationId));
  const dangling = new Set(unresolved.map((u) => u.correlationId));
  for (const u of unresolved) {
    const c = unique.find((x) => x.id === u.correlationId)!;
    invalid.push({ file: c.file, document: c.index + 1, error: `correlation ${u.correlationId} references ${u.reference}, which is neither in this import nor installed` });
  }
  const kept = unique.filter((c) => !dangling.has(c.id));
  const blockedBy = new Map<string, number>();
  for (const c of kept) {
    if (c.rule.kind === 'detection' && c.rule.unmapped !== undefined) {
      const ls = describeLogsource(c.rule.logsource);
      blockedBy.set(ls, (blockedBy.get(ls) ?? 0) + 1);
    }
  }
  const result: BulkImportResult = {
    imported: kept.length,
    ruleIds: kept.map((c) => c.id),
    blocked: [...blockedBy.values()].reduce((a, b) => a + b, 0),
    blockedByLogsource: [...blockedBy.entries()].sort((a, b) => b[1] - a[1]).map(([logsource, rules]) => ({ logsource, rules })),
    invalid,
  };
  if (kept.length === 0) return reject('invalid', 'no valid rule in the import', { issues: invalid.map((i) => `${i.file}${i.document !== undefined ? ` document ${i.document}` : ''}${i.line !== undefined ? ` line ${i.line}` : ''}: ${i.error}`).slice(0, 1000) });
  const data: RulesImported = { source, text: texts.join('\n---\n'), rules: kept.map(({ id, doc }) => ({ id, doc })) };
  return accept([{ type: DetectionRecord.RulesImported, data }], result);
}
