import type { MissingCapability, PlanEntry } from '../../projections/plan.js';
import type { MonitoringState } from '../../projections/monitoring.js';
import type { MonitoringSettings } from '../../projections/monitoring-settings.js';
import { DISK_LOW_RULE, SOURCE_SILENT_RULE } from '../../commands/system-alerts.js';

/**
 * The built-in detections of the monitor itself, as detection-plan lines: `vigil.source-silent`
 * (ready once any source or collector reports, since cadences are learned from them) and
 * `vigil.disk-low` (ready while a watermark is set).
 */
export function selfMonitoringPlan(settings: MonitoringSettings, state: MonitoringState): PlanEntry[] {
  const noSource: MissingCapability[] =
    state.sources.size === 0
      ? [
          {
            capability: 'any source or collector',
            problem: 'no_source_connected',
            fix: 'send evidence from any source: a cadence is learned from each source that reports',
          },
        ]
      : [];
  const d = settings.disk;
  return [
    {
      ruleId: SOURCE_SILENT_RULE,
      title: 'Source or collector went silent',
      author: 'Vigil',
      enabled: settings.silence.enabled,
      state: noSource.length > 0 ? 'blocked' : 'ready',
      problem: noSource.length > 0 ? 'no_source_connected' : null,
      needs: null,
      tags: [],
      requiredCapabilities: ['any source or collector'],
      missingCapabilities: noSource,
    },
    {
      ruleId: DISK_LOW_RULE,
      title: 'Store disk space past a watermark',
      author: 'Vigil',
      enabled: d.lowFreeBytes > 0 || d.lowFreePercent > 0 || d.floodFreeBytes > 0 || d.floodFreePercent > 0,
      state: 'ready',
      problem: null,
      needs: null,
      tags: [],
      requiredCapabilities: ["the store's filesystem"],
      missingCapabilities: [],
    },
  ];
}
