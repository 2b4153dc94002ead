import { DetectionRecord } from '../events/detection-records.js';
import type { EventData } from '../events/union.js';
import { DISK_LOW_RULE, systemAlertId, systemAlertRaised, systemResolution } from '../monitoring/system-alerts.js';
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
  const events: DomainEvent[] = [];
  const crossed: { -readonly [K in keyof EventData<'DiskWatermarkCrossed'>]: EventData<'DiskWatermarkCrossed'>[K] } = { from, to: sample.level, freeBytes: sample.freeBytes, totalBytes: sample.totalBytes };
  events.push({ type: 'DiskWatermarkCrossed', data: crossed });
  const open = state.monitoring.disk.alertId;
  if (from === 'ok') {
    const alertId = systemAlertId(state.alerts, DISK_LOW_RULE, 'store', ctx.now);
    crossed.alertId = alertId;
    events.push({
      type: DetectionRecord.AlertRaised,
      data: systemAlertRaised({
        alertId, ruleId: DISK_LOW_RULE, groupKey: 'store', at: ctx.now, level: sample.level === 'flood' ? 'critical' : 'high', severity: sample.level === 'flood' ? 9 : 7,
        title: `Store disk space ${sample.level === 'flood' ? 'past the flood mark: writes refused' : 'low'} (${mib(sample.freeBytes)} free of ${mib(sample.totalBytes)})`,
        facts: { level: sample.level, freeBytes: sample.freeBytes, totalBytes: sample.totalBytes },
      }),
    });
  } else if (sample.level === 'ok' && open !== undefined) {
    crossed.alertId = open;
    const resolution = systemResolution(state.alerts, open, DISK_LOW_RULE, `free space back above the low mark (${mib(sample.freeBytes)} free of ${mib(sample.totalBytes)})`);
    if (resolution) events.push({ type: DetectionRecord.AlertReviewed, data: resolution });
  }
  return accept(events, sample.level);
}
