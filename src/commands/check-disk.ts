import { DetectionRecord } from '../events/detection-records.js';
import type { EventData } from '../events/union.js';
import { DISK_LOW_RULE, systemAlertId, systemAlertRaised, systemResolution } from './system-alerts.js';
import type { AlertsState } from '../projections/alerts.js';
import type { DiskLevel, MonitoringState } from '../projections/monitoring.js';
import { accept, type CommandContext, type Decision, type DomainEvent } from './decision.js';

/** One sample of the store's filesystem, taken by the monitor and carried in the command. */
export interface DiskSample {
  readonly level: DiskLevel;
  readonly freeBytes: number;
  readonly totalBytes: number;
}

/** What a disk check reads. */
export interface DiskCheckState {
  readonly monitoring: MonitoringState;
  readonly alerts: AlertsState;
}

const mib = (n: number): string => `${Math.round(n / 1024 / 1024)} MiB`;

/**
 * Decides a disk sample against the level last logged: a change is logged; leaving `ok` raises a
 * `vigil.disk-low` alert, returning to `ok` resolves it with a history entry; the same level says nothing.
 */
export function decideDiskCheck(state: DiskCheckState, sample: DiskSample, ctx: CommandContext): Decision<DiskLevel> {
  const from = state.monitoring.disk.level;
  if (sample.level === from) return accept([], from);
  const crossed = (alertId?: string): DomainEvent => {
    const data: EventData<'DiskWatermarkCrossed'> = {
      from,
      to: sample.level,
      freeBytes: sample.freeBytes,
      totalBytes: sample.totalBytes,
      ...(alertId !== undefined ? { alertId } : {}),
    };
    return { type: 'DiskWatermarkCrossed', data };
  };
  if (from === 'ok') {
    const alertId = systemAlertId(state.alerts, DISK_LOW_RULE, 'store', ctx.now);
    const flood = sample.level === 'flood';
    return accept(
      [
        crossed(alertId),
        {
          type: DetectionRecord.AlertRaised,
          data: systemAlertRaised({
            alertId,
            ruleId: DISK_LOW_RULE,
            groupKey: 'store',
            at: ctx.now,
            level: flood ? 'critical' : 'high',
            severity: flood ? 9 : 7,
            title:
              `Store disk space ${flood ? 'past the flood mark: writes refused' : 'low'} ` +
              `(${mib(sample.freeBytes)} free of ${mib(sample.totalBytes)})`,
            facts: { level: sample.level, freeBytes: sample.freeBytes, totalBytes: sample.totalBytes },
          }),
        },
      ],
      sample.level,
    );
  }
  const open = state.monitoring.disk.alertId;
  if (sample.level !== 'ok' || open === undefined) return accept([crossed()], sample.level);
  const resolution = systemResolution(
    state.alerts,
    open,
    DISK_LOW_RULE,
    `free space back above the low mark (${mib(sample.freeBytes)} free of ${mib(sample.totalBytes)})`,
  );
  return accept(
    [crossed(open), ...(resolution ? [{ type: DetectionRecord.AlertReviewed, data: resolution }] : [])],
    sample.level,
  );
}
