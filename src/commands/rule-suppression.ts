import * as v from 'valibot';
import { readSuppression, suppressionFits, SUPPRESSION_LIMITS } from '../detection/suppression.js';
import { DetectionRecord, type RuleSuppressionSet } from '../events/detection-records.js';
import { effectiveSuppression, type DetectionState, type EffectiveSuppression } from '../projections/detection.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';

const Reason = v.pipe(v.string(), v.trim(), v.minLength(1, 'a reason is required'), v.maxLength(4096));

/** Body of `PUT /api/v1/rules/{id}/suppression`: the fields, the window (a Sigma timespan) and why. */
export const SetSuppressionBody = v.strictObject({
  by: v.pipe(
    v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(SUPPRESSION_LIMITS.fieldName))),
    v.minLength(1),
    v.maxLength(SUPPRESSION_LIMITS.by),
  ),
  for: v.pipe(v.string(), v.maxLength(16)),
  reason: Reason,
});

/** Body of `DELETE /api/v1/rules/{id}/suppression`: why the setting is cleared. */
export const ClearSuppressionBody = v.strictObject({ reason: Reason });

/** What setting or clearing a suppression answers: the rule and the suppression now in effect (none: null). */
export interface SuppressionAnswer {
  readonly id: string;
  readonly suppression: EffectiveSuppression | null;
}

/**
 * Decides setting (`suppress` given) or clearing a rule's suppression through the API, recorded with the
 * authenticated principal: the setting must read as a rule document's `suppress:` would, and a
 * correlation's must suppress by its group-by fields.
 */
export function decideSetRuleSuppression(
  detection: DetectionState,
  ruleId: string,
  body: { by?: string[]; for?: string; reason: string },
  ctx: CommandContext,
): Decision<SuppressionAnswer> {
  const rule = detection.rules.get(ruleId);
  if (!rule) return reject('not_found', `rule ${ruleId.slice(0, 128)} is not installed`);
  if (!ctx.actor) return reject('unauthenticated', 'a suppression needs an authenticated principal');
  let suppress: RuleSuppressionSet['suppress'];
  if (body.by !== undefined || body.for !== undefined) {
    const read = readSuppression({ by: body.by, for: body.for });
    const fits = read.ok ? suppressionFits(rule.compiled, read.value) : read;
    if (!fits.ok) return reject('invalid', 'invalid suppression', { issues: [fits.error] });
    suppress = { by: fits.value.by, for: fits.value.for, forMs: fits.value.forMs };
  } else if (!rule.suppressOverride)
    return reject('not_found', `rule ${ruleId.slice(0, 128)} has no suppression set through the API`);
  const data: RuleSuppressionSet = {
    ruleId,
    ...(suppress ? { suppress } : {}),
    reason: body.reason,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  const { suppressOverride: _prior, ...own } = rule;
  const after = effectiveSuppression(
    suppress
      ? { ...own, suppressOverride: { ...suppress, reason: body.reason, principal: ctx.actor.id, at: ctx.now } }
      : own,
  );
  return accept([{ type: DetectionRecord.RuleSuppressionSet, data }], { id: ruleId, suppression: after ?? null });
}
