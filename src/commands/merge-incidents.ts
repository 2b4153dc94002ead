import * as v from 'valibot';
import { DetectionRecord, type IncidentMerged } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';
import { refuseMerged } from './incident-moves.js';
import { Reason } from './review-alert.js';

/** Body of `POST /api/v1/incidents/{id}/merge`: the incident to merge this one into, and why. */
export const MergeIncidentBody = v.strictObject({
  into: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  reason: Reason,
});

/**
 * Decides merging one incident into another: its alerts move to the other, it becomes `merged`
 * with `mergedInto` naming where it went, and both timelines say so. Neither may already be merged;
 * the target may not be closed (reopen it first).
 */
export function decideMergeIncident(
  alerts: AlertsState,
  incidentId: string,
  body: v.InferOutput<typeof MergeIncidentBody>,
  ctx: CommandContext,
): Decision<{ id: string; mergedInto: string; alertIds: string[] }> {
  const source = alerts.incidents.get(incidentId);
  if (!source) return reject('not_found', `incident ${incidentId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'a merge needs an authenticated principal');
  if (body.into === incidentId)
    return reject('invalid', 'an incident cannot be merged into itself', {
      issues: ['into: the incident being merged'],
    });
  const target = alerts.incidents.get(body.into);
  if (!target)
    return reject('invalid', `incident ${body.into} does not exist`, {
      issues: [`into: incident ${body.into} does not exist`],
    });
  const merged = refuseMerged(source) ?? refuseMerged(target);
  if (merged) return merged;
  if (target.status === 'closed')
    return reject('conflict', `incident ${target.id} is closed; reopen it (PATCH its status) before merging into it`);
  const data: IncidentMerged = {
    incidentId,
    into: target.id,
    alertIds: [...source.alertIds],
    reason: body.reason,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: DetectionRecord.IncidentMerged, data }], {
    id: incidentId,
    mergedInto: target.id,
    alertIds: [...source.alertIds],
  });
}
