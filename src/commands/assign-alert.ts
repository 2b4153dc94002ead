import * as v from 'valibot';
import { DetectionRecord, type AlertAssigned } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';

/** A principal id as an assignee: printable, at most 128 characters. */
export const PrincipalId = v.pipe(
  v.string(),
  v.trim(),
  v.minLength(1, 'an assignee is a principal id'),
  v.maxLength(128),
  v.regex(/^[^\p{Cc}]+$/u, 'no control characters'),
);

/**
 * Body of `PUT /api/v1/alerts/{alertId}/assignee`: the principal to assign, or `null` to unassign; an optional reason.
 */
export const AssignAlertBody = v.strictObject({
  assignee: v.nullable(PrincipalId),
  reason: v.optional(v.pipe(v.string(), v.trim(), v.maxLength(4096))),
});

/** The answer of an assignment: the alert and its assignee (null when unassigned). */
export interface AssignResult {
  id: string;
  assignee: string | null;
}

/**
 * Decides an assignment: any analyst may assign any alert to any principal id (including
 * themselves) or unassign it. Setting the assignee it already has changes nothing and records
 * nothing (PUT is idempotent).
 */
export function decideAssignAlert(
  alerts: AlertsState,
  alertId: string,
  body: v.InferOutput<typeof AssignAlertBody>,
  ctx: CommandContext,
): Decision<AssignResult> {
  const alert = alerts.alerts.get(alertId);
  if (!alert) return reject('not_found', `alert ${alertId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'an assignment needs an authenticated principal');
  const to = body.assignee ?? undefined;
  if (alert.assignee === to) return accept([], { id: alertId, assignee: to ?? null });
  const data: AlertAssigned = {
    alertId,
    ...(alert.assignee !== undefined ? { from: alert.assignee } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(body.reason ? { reason: body.reason } : {}),
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: DetectionRecord.AlertAssigned, data }], { id: alertId, assignee: to ?? null });
}
