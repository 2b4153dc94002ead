import type * as v from 'valibot';
import { DetectionRecord, type IncidentAssigned } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import type { AssignAlertBody } from './assign-alert.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';
import { refuseMerged } from './incident-moves.js';

/**
 * Decides an incident's assignment (body as for an alert: a principal id or null). Setting the
 * assignee it already has records nothing; a merged incident is not assigned.
 */
export function decideAssignIncident(
  alerts: AlertsState,
  incidentId: string,
  body: v.InferOutput<typeof AssignAlertBody>,
  ctx: CommandContext,
): Decision<{ id: string; assignee: string | null }> {
  const incident = alerts.incidents.get(incidentId);
  if (!incident) return reject('not_found', `incident ${incidentId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'an assignment needs an authenticated principal');
  const merged = refuseMerged(incident);
  if (merged) return merged;
  const to = body.assignee ?? undefined;
  if (incident.assignee === to) return accept([], { id: incidentId, assignee: to ?? null });
  const data: IncidentAssigned = {
    incidentId,
    ...(incident.assignee !== undefined ? { from: incident.assignee } : {}),
    ...(to !== undefined ? { to } : {}),
    ...(body.reason ? { reason: body.reason } : {}),
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: DetectionRecord.IncidentAssigned, data }], { id: incidentId, assignee: to ?? null });
}
