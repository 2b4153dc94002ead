import { unresolvedReferences } from '../detection/engine.js';
import { describeLogsource } from '../detection/logsources.js';
import type { RuleLimits } from '../detection/rule-limits.js';
import { parseSigmaText } from '../detection/sigma-yaml.js';
import type { CompiledSigma } from '../detection/types.js';
import { DetectionRecord, type RuleSource, type RulesImported } from '../events/detection-records.js';
import type { DetectionState } from '../projections/detection.js';
import { accept, reject, type Decision } from './decision.js';
import { compileWithinLimits, invalidDocument } from './import-rules.js';

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

/**
 * Decides a bulk import (a rules directory, or a multi-document YAML): every valid rule is installed,
 * those whose logsource no normalizer produces included (they wait, blocked, in the plan); each
 * document that is not valid Sigma, or is over a rule limit, is refused on its own, named by file,
 * document and line. Nothing valid is held back by an invalid neighbour. Correlations must reference
 * installed or imported rules.
 */
export function decideBulkImport(
  detection: DetectionState,
  files: readonly RuleFile[],
  source: RuleSource,
  limits: RuleLimits,
): Decision<BulkImportResult> {
  if (files.length === 0) return reject('invalid', 'no rule file in the body');
  if (files.length > BULK_IMPORT_LIMITS.files)
    return reject('invalid', `more than ${BULK_IMPORT_LIMITS.files} files in one import`);
  const { compiled, invalid, texts } = compileFiles(files, limits);
  const kept = withoutDangling(detection, withoutDuplicates(compiled, invalid), invalid);
  if (kept.length === 0)
    return reject('invalid', 'no valid rule in the import', { issues: invalid.map(issueText).slice(0, 1000) });
  const data: RulesImported = { source, text: texts.join('\n---\n'), rules: kept.map(({ id, doc }) => ({ id, doc })) };
  return accept([{ type: DetectionRecord.RulesImported, data }], summarize(kept, invalid));
}

interface CompiledDocument {
  readonly id: string;
  readonly doc: unknown;
  readonly rule: CompiledSigma;
  readonly file: string;
  readonly index: number;
}

/**
 * Every document of every file compiled, or refused with its place (over a limit or invalid); the texts
 * of the files that gave rules.
 */
function compileFiles(
  files: readonly RuleFile[],
  limits: RuleLimits,
): {
  compiled: CompiledDocument[];
  invalid: InvalidRule[];
  texts: string[];
} {
  const compiled: CompiledDocument[] = [];
  const invalid: InvalidRule[] = [];
  const texts: string[] = [];
  for (const file of files) {
    const parsed = parseSigmaText(file.text);
    if (!parsed.ok) {
      invalid.push({ file: file.name, error: parsed.error });
      continue;
    }
    let used = false;
    parsed.docs.forEach((doc, i) => {
      const r = compileWithinLimits(doc, limits);
      if (r.ok) {
        compiled.push({ id: r.rule.id, doc, rule: r.rule, file: file.name, index: i });
        used = true;
        return;
      }
      const refused = invalidDocument(doc, i, parsed.origins?.[i], r.error);
      invalid.push({
        file: file.name,
        document: i + 1,
        ...(refused.line !== undefined ? { line: refused.line } : {}),
        ...(refused.title !== undefined ? { title: refused.title } : {}),
        error: r.error,
      });
    });
    if (used) texts.push(file.text.trim());
  }
  return { compiled, invalid, texts };
}

/** The first document of each rule id; later ones are refused. */
function withoutDuplicates(compiled: readonly CompiledDocument[], invalid: InvalidRule[]): CompiledDocument[] {
  const firstOf = new Map<string, string>();
  return compiled.filter((c) => {
    const seen = firstOf.get(c.id);
    if (seen === undefined) {
      firstOf.set(c.id, c.file);
      return true;
    }
    invalid.push({
      file: c.file,
      document: c.index + 1,
      error: `rule id ${c.id} appears twice in the import (first in ${seen})`,
    });
    return false;
  });
}

/** The documents without correlations whose referenced rules are neither imported nor installed (those are refused). */
function withoutDangling(
  detection: DetectionState,
  unique: readonly CompiledDocument[],
  invalid: InvalidRule[],
): CompiledDocument[] {
  const combined = new Map([...detection.rules.values()].map((r) => [r.id, r.compiled]));
  for (const c of unique) combined.set(c.id, c.rule);
  const byId = new Map(unique.map((c) => [c.id, c]));
  const unresolved = unresolvedReferences([...combined.values()]).filter((u) => byId.has(u.correlationId));
  for (const u of unresolved) {
    const c = byId.get(u.correlationId)!;
    invalid.push({
      file: c.file,
      document: c.index + 1,
      error: `correlation ${u.correlationId} references ${u.reference}, which is neither in this import nor installed`,
    });
  }
  const dangling = new Set(unresolved.map((u) => u.correlationId));
  return unique.filter((c) => !dangling.has(c.id));
}

function summarize(kept: readonly CompiledDocument[], invalid: InvalidRule[]): BulkImportResult {
  const blockedBy = new Map<string, number>();
  for (const c of kept) {
    if (c.rule.kind !== 'detection' || c.rule.unmapped === undefined) continue;
    const ls = describeLogsource(c.rule.logsource);
    blockedBy.set(ls, (blockedBy.get(ls) ?? 0) + 1);
  }
  return {
    imported: kept.length,
    ruleIds: kept.map((c) => c.id),
    blocked: [...blockedBy.values()].reduce((a, b) => a + b, 0),
    blockedByLogsource: [...blockedBy.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([logsource, rules]) => ({ logsource, rules })),
    invalid,
  };
}

function issueText(i: InvalidRule): string {
  const document = i.document !== undefined ? ` document ${i.document}` : '';
  const line = i.line !== undefined ? ` line ${i.line}` : '';
  return `${i.file}${document}${line}: ${i.error}`;
}
