import { DetectionRecord } from '../events/detection-records.js';
import type { EventData } from '../events/union.js';
import type { AlertsState } from '../projections/alerts.js';
import type { WitnessesState } from '../projections/witnesses.js';
import { accept, type CommandContext, type Decision, type DomainEvent } from './decision.js';
import { WITNESS_REFUSED_RULE, systemAlertId, systemAlertRaised } from './system-alerts.js';

/** What a witness answered that the instance counts as a refusal, as its pusher saw it. */
export interface WitnessRefusalSeen {
  readonly witness: string;
  readonly url: string;
  readonly size: number;
  readonly witnessSize?: number;
  readonly status: number;
  readonly reason: string;
  readonly answer: string;
}

/** What a refusal is decided against. */
export interface WitnessRefusalState {
  readonly witnesses: WitnessesState;
  readonly alerts: AlertsState;
}

/** The longest part of a witness's answer kept in the record and the alert. */
export const ANSWER_KEPT = 512;

/**
 * Records a witness's refusal and raises a `vigil.witness-refused` alert, once per witness and refused size: the
 * same size again says nothing, and neither does a later size while the witness's last refusal alert is still open
 * (a forked log grows, and each push would otherwise raise one more). Returns whether it raised one. Pure.
 */
export function decideWitnessRefusal(
  state: WitnessRefusalState,
  seen: WitnessRefusalSeen,
  ctx: CommandContext,
): Decision<boolean> {
  const last = state.witnesses.refusals.get(seen.witness);
  if (last && (last.size === seen.size || isOpen(state.alerts, last.alertId))) return accept([], false);
  const alertId = systemAlertId(state.alerts, WITNESS_REFUSED_RULE, seen.witness, ctx.now);
  const answer = seen.answer.slice(0, ANSWER_KEPT);
  const data: EventData<'WitnessRefused'> = {
    witness: seen.witness,
    url: seen.url,
    size: seen.size,
    ...(seen.witnessSize !== undefined ? { witnessSize: seen.witnessSize } : {}),
    status: seen.status,
    reason: seen.reason,
    answer,
    alertId,
  };
  const events: DomainEvent[] = [
    { type: 'WitnessRefused', data },
    {
      type: DetectionRecord.AlertRaised,
      data: systemAlertRaised({
        alertId,
        ruleId: WITNESS_REFUSED_RULE,
        groupKey: seen.witness,
        title: `Witness ${seen.witness.slice(0, 200)} refused the checkpoint of ${seen.size} records: ${seen.reason}`,
        level: 'critical',
        severity: 9,
        facts: {
          witness: seen.witness,
          url: seen.url,
          size: seen.size,
          witnessSize: seen.witnessSize ?? null,
          status: seen.status,
          reason: seen.reason,
          answer,
        },
        at: ctx.now,
      }),
    },
  ];
  return accept(events, true);
}

/** Whether an alert exists and has not been dismissed. */
function isOpen(alerts: AlertsState, alertId: string): boolean {
  const alert = alerts.alerts.get(alertId);
  return alert !== undefined && alert.status !== 'dismissed';
}
