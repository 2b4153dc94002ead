import * as v from 'valibot';
import { DetectionRecord, type IncidentStatusChanged } from '../events/detection-records.js';
import { INCIDENT_STATUSES, type AlertsState } from '../projections/alerts.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';
import { refuseMerged } from './incident-moves.js';
import { Reason } from './review-alert.js';

/** Body of `PATCH /api/v1/incidents/{id}`: the lifecycle status and why. */
export const ChangeIncidentStatusBody = v.strictObject({ status: v.picklist(INCIDENT_STATUSES), reason: Reason });

/**
 * Decides an incident's lifecycle step: open → investigating → contained → closed is the usual
 * path, and any of the four may follow any other (an analyst may reopen a closed incident, or skip
 * containment). Every step is kept in the timeline with who, how they authenticated, and why. A
 * merged incident no longer changes.
 */
export function decideIncidentStatus(
  alerts: AlertsState,
  incidentId: string,
  body: v.InferOutput<typeof ChangeIncidentStatusBody>,
  ctx: CommandContext,
): Decision<{ id: string; status: string }> {
  const incident = alerts.incidents.get(incidentId);
  if (!incident) return reject('not_found', `incident ${incidentId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'an incident change needs an authenticated principal');
  const merged = refuseMerged(incident);
  if (merged) return merged;
  const data: IncidentStatusChanged = {
    incidentId,
    from: incident.status,
    to: body.status,
    reason: body.reason,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: DetectionRecord.IncidentStatusChanged, data }], { id: incidentId, status: body.status });
}
