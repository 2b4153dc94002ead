import { decideImportRules } from '../../commands/import-rules.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import { loadBuiltinPack } from '../../detection/builtin-pack.js';
import { DEFAULT_RULE_LIMITS } from '../../detection/rule-limits.js';
import type { DetectionState } from '../../projections/detection.js';

/**
 * Installs the built-in rule pack on first start, and again when the shipped pack changed (its
 * version is a hash of the text). Rules keep their enabled switch across updates.
 */
export async function installBuiltinRules(
  pipeline: Pipeline<WriteModels>,
  now: string,
): Promise<{ installed: boolean; version: string; rules: number }> {
  const pack = loadBuiltinPack();
  if (pipeline.models.detection.builtinPack === pack.version)
    return { installed: false, version: pack.version, rules: 0 };
  const outcome = await pipeline.dispatch({
    decide: (m) => decideImportRules(m.detection, pack.text, 'builtin', DEFAULT_RULE_LIMITS, pack.version),
    ctx: { now, actor: { id: 'vigil', authentication: 'builtin' } },
  });
  if (!outcome.ok)
    throw new Error(
      `the built-in rule pack does not import: ${outcome.rejection.message}: ` +
        `${(outcome.rejection.issues ?? []).join('; ')}`,
    );
  return { installed: true, version: pack.version, rules: outcome.result.ruleIds.length };
}
