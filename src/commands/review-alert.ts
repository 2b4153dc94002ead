import * as v from 'valibot';
import { DetectionRecord, type AlertReviewed, type IncidentOpened } from '../events/detection-records.js';
import { incidentIdOf } from './alerting/alert-facts.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES, type AlertsState } from '../projections/alerts.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';
import { closeEmptied } from './incident-moves.js';

/** A review's free-text justification: required, trimmed, at most 4096 characters. */
export const Reason = v.pipe(v.string(), v.trim(), v.minLength(1, 'a reason is required'), v.maxLength(4096));

/** Body of `PATCH /api/v1/alerts/{alertId}`: a status, a reason, and optionally what the analyst concluded. */
export const ReviewAlertBody = v.strictObject({
  status: v.picklist(ALERT_STATUSES),
  reason: Reason,
  disposition: v.optional(v.picklist(ALERT_DISPOSITIONS)),
});

/** Body of `POST /api/v1/incidents`. */
export const PromoteIncidentBody = v.strictObject({
  alertIds: v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(128))), v.minLength(1), v.maxLength(500)),
  title: v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(256)),
  reason: Reason,
});

/**
 * Decides an alert review: any status may follow any other (spec 3.1); every review is kept in the
 * history with the authenticated principal and how it authenticated, taken from the context.
 */
export function decideReviewAlert(
  alerts: AlertsState,
  alertId: string,
  body: v.InferOutput<typeof ReviewAlertBody>,
  ctx: CommandContext,
): Decision<{ id: string; status: string }> {
  const alert = alerts.alerts.get(alertId);
  if (!alert) return reject('not_found', `alert ${alertId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'a review needs an authenticated principal');
  const data: AlertReviewed = {
    alertId,
    from: alert.status,
    to: body.status,
    reason: body.reason,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
    ...(body.disposition !== undefined ? { disposition: body.disposition } : {}),
  };
  return accept([{ type: DetectionRecord.AlertReviewed, data }], { id: alertId, status: body.status });
}

/**
 * Decides promoting alerts to a new incident; every alert must exist. Alerts already in another
 * incident move to the new one, and an incident the move empties is closed (incident-moves.ts).
 */
export function decidePromoteIncident(
  alerts: AlertsState,
  body: v.InferOutput<typeof PromoteIncidentBody>,
  ctx: CommandContext,
): Decision<{ id: string; title: string; alertIds: string[] }> {
  const ids = [...new Set(body.alertIds)];
  const missing = ids.filter((id) => !alerts.alerts.has(id));
  if (missing.length > 0)
    return reject('invalid', 'unknown alerts', {
      issues: missing.slice(0, 50).map((id) => `alertIds: ${id} does not exist`),
    });
  let incidentId = incidentIdOf(`promoted\0${ids.join(',')}\0${ctx.now}`);
  for (let n = 2; alerts.incidents.has(incidentId); n++)
    incidentId = `${incidentIdOf(`promoted\0${ids.join(',')}\0${ctx.now}`)}-${n}`;
  const data: IncidentOpened = {
    incidentId,
    title: body.title,
    origin: 'promoted',
    reason: body.reason,
    alertIds: ids,
    ...(ctx.actor ? { principal: ctx.actor.id, authentication: ctx.actor.authentication } : {}),
  };
  const closing = ctx.actor ? closeEmptied(alerts, ids, incidentId, { ...ctx, actor: ctx.actor }) : [];
  return accept([{ type: DetectionRecord.IncidentOpened, data }, ...closing], {
    id: incidentId,
    title: body.title,
    alertIds: ids,
  });
}
