import { join } from 'node:path';
import { detectionPlan } from '../src/projections/plan.js';
import { decideBulkReview } from '../src/commands/bulk-review-alerts.js';
import { eventOf } from '../src/events/union.js';
import { openInstanceStore } from '../src/cli/instance/open.js';
import type { ActivityState } from '../src/projections/activity.js';
import type { AlertsState } from '../src/projections/alerts.js';
import { listAlerts } from '../src/projections/alerts-query.js';
import { consoleView } from '../src/projections/console-query.js';
import type { DetectionState } from '../src/projections/detection.js';
import type { SourcesState } from '../src/projections/sources.js';
import type { Figure } from './foundation.js';
import { scratch, timeRuns } from './harness.js';

const ALERTS = 100_000;

/** The median of `runs` timings of `f`, in milliseconds to a tenth. */
const median = (runs: number, f: () => unknown): number => Math.round(timeRuns(runs, f).p50 * 10) / 10;

/** The console projection and the alert queue's reads with 100,000 alerts stored (issue 12: pages under 200 ms). */
export async function consoleBench(): Promise<Figure[]> {
  const inst = await openInstanceStore(join(scratch('console'), 'store'));
  try {
    const levels = ['informational', 'low', 'medium', 'high', 'critical'];
    for (let b = 0; b < ALERTS; b += 5000) {
      const batch = Array.from({ length: 5000 }, (_, i) => {
        const k = b + i;
        const t = new Date(Date.UTC(2026, 10, 22, 0, 0, 0) + k * 1000).toISOString();
        return eventOf('AlertRaised', {
          alertId: `alr_${k}`,
          ruleId: `rule-${k % 200}`,
          groupKey: `g${k}`,
          title: `Detection ${k % 200}`,
          level: levels[k % 5]!,
          severity: (k % 5) * 2,
          confidence: 0.7,
          matchReason: { selections: ['sel'], fields: [], keywords: [] },
          evidence: [{ eventId: `e${k}`, time: t, summary: 's' }],
          affectedSystems: [`host:h${k % 500}`],
          firstSeen: t,
          lastSeen: t,
          tags: [],
        });
      });
      await inst.writer.record(batch, { now: '2026-11-23T00:00:00.000Z' });
    }
    const m = inst.writer.models;
    const now = new Date('2026-11-23T00:00:00.000Z');
    const view = () =>
      consoleView({
        alerts: m.alerts,
        activity: m.activity,
        now,
        plan: detectionPlan(m.detection, m.sources, now, 24),
      });
    const json = JSON.stringify(view());
    const alerts = m.alerts;
    const ctx = { now: now.toISOString(), actor: { id: 'bench', authentication: 'bearer' } };
    return [
      {
        name: 'console projection, 100k alerts',
        value: median(15, view),
        unit: 'ms',
        note: `median of 15; ${Math.round(json.length / 1024)} KiB of JSON`,
      },
      {
        name: 'alert queue page (100 of 100k, no filter)',
        value: median(15, () => listAlerts(alerts, {}, 100)),
        unit: 'ms',
        note: 'median of 15',
      },
      {
        name: 'alert queue page (rule filter, 500 match)',
        value: median(15, () => listAlerts(alerts, { ruleId: 'rule-7' }, 100)),
        unit: 'ms',
        note: 'median of 15',
      },
      {
        name: 'bulk review decision, filter matching 10k',
        value: median(5, () =>
          decideBulkReview(alerts, { filter: { minSeverity: 8 }, status: 'dismissed', reason: 'bench' }, ctx),
        ),
        unit: 'ms',
        note: 'median of 5; decided, not appended',
      },
    ];
  } finally {
    await inst.close();
  }
}
