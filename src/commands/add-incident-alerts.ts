import * as v from 'valibot';
import { DetectionRecord, type IncidentAlertsAdded } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';
import { closeEmptied, refuseMerged } from './incident-moves.js';
import { Reason } from './review-alert.js';

/** Body of `POST /api/v1/incidents/{id}/alerts`: the alerts to promote into the incident, and why. */
export const AddIncidentAlertsBody = v.strictObject({
  alertIds: v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(128))), v.minLength(1), v.maxLength(500)),
  reason: Reason,
});

/**
 * Decides promoting alerts into an existing incident. The promotion rule holds as for a new
 * incident: alerts in another incident move here, and an incident left empty is closed. The target
 * may be neither merged (409 naming where it went) nor closed (reopen it first). Alerts already in
 * it are left as they are.
 */
export function decideAddIncidentAlerts(
  alerts: AlertsState,
  incidentId: string,
  body: v.InferOutput<typeof AddIncidentAlertsBody>,
  ctx: CommandContext,
): Decision<{ id: string; added: string[] }> {
  const incident = alerts.incidents.get(incidentId);
  if (!incident) return reject('not_found', `incident ${incidentId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'a promotion needs an authenticated principal');
  const merged = refuseMerged(incident);
  if (merged) return merged;
  if (incident.status === 'closed')
    return reject('conflict', `incident ${incidentId} is closed; reopen it (PATCH its status) before adding alerts`);
  const ids = [...new Set(body.alertIds)];
  const missing = ids.filter((id) => !alerts.alerts.has(id));
  if (missing.length > 0)
    return reject('invalid', 'unknown alerts', {
      issues: missing.slice(0, 50).map((id) => `alertIds: ${id} does not exist`),
    });
  const added = ids.filter((id) => alerts.alerts.get(id)!.incidentId !== incidentId);
  if (added.length === 0) return accept([], { id: incidentId, added });
  const data: IncidentAlertsAdded = {
    incidentId,
    alertIds: added,
    reason: body.reason,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept(
    [
      { type: DetectionRecord.IncidentAlertsAdded, data },
      ...closeEmptied(alerts, added, incidentId, { ...ctx, actor: ctx.actor }),
    ],
    { id: incidentId, added },
  );
}
