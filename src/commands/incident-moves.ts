import { DetectionRecord, type IncidentStatusChanged } from '../events/detection-records.js';
import type { AlertsState, IncidentView } from '../projections/alerts.js';
import { reject, type CommandContext, type Decision, type DomainEvent } from './decision.js';

/**
 * The promotion rule: an alert is in one incident at most. Promoting alerts that are in another
 * incident moves them (that incident's timeline says where they went); an incident that the move
 * leaves without alerts is closed in the same batch, with a reason naming where they went.
 */
export function closeEmptied(
  alerts: AlertsState,
  moved: readonly string[],
  targetId: string,
  ctx: CommandContext & { actor: NonNullable<CommandContext['actor']> },
): DomainEvent[] {
  const movedSet = new Set(moved);
  const sources = new Set(
    moved.map((id) => alerts.alerts.get(id)?.incidentId).filter((i): i is string => i !== undefined && i !== targetId),
  );
  const events: DomainEvent[] = [];
  for (const id of [...sources].sort()) {
    const incident = alerts.incidents.get(id)!;
    if (incident.status === 'closed' || incident.status === 'merged' || incident.alertIds.some((a) => !movedSet.has(a)))
      continue;
    const data: IncidentStatusChanged = {
      incidentId: id,
      from: incident.status,
      to: 'closed',
      reason: `all its alerts moved to incident ${targetId}`,
      principal: ctx.actor.id,
      authentication: ctx.actor.authentication,
    };
    events.push({ type: DetectionRecord.IncidentStatusChanged, data });
  }
  return events;
}

/** Refuses a change to an incident that was merged away (409 naming where it went), or undefined when it may change. */
export function refuseMerged(incident: IncidentView): Decision<never> | undefined {
  if (incident.status !== 'merged') return undefined;
  return reject(
    'conflict',
    `incident ${incident.id} was merged into incident ${incident.mergedInto}; change that one`,
    { details: { mergedInto: incident.mergedInto } },
  );
}
