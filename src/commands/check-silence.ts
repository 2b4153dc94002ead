import type { AlertReviewed } from '../events/detection-records.js';
import { DetectionRecord } from '../events/detection-records.js';
import type { EventData } from '../events/union.js';
import { isExpectedQuiet, silenceThresholdMs, usualCadenceMs } from '../projections/monitoring-cadence.js';
import type { SilenceSettings } from '../projections/monitoring-settings.js';
import { SOURCE_SILENT_RULE, systemAlertId, systemAlertRaised, systemResolution } from './system-alerts.js';
import type { AlertsState } from '../projections/alerts.js';
import type { MonitoringState } from '../projections/monitoring.js';
import { accept, type CommandContext, type Decision, type DomainEvent } from './decision.js';

/** What one silence check found. */
export interface SilenceCheckResult {
  readonly silenced: readonly string[];
  readonly resumed: readonly string[];
}

/** What a silence check reads: the watched sources and the alerts (to resolve its own). */
export interface SilenceCheckState {
  readonly monitoring: MonitoringState;
  readonly alerts: AlertsState;
}

/** The check itself: since when this process has been watching (silence while Vigil was down is not the source's). */
export interface SilenceCheck {
  readonly watchingSince?: string;
}

const seconds = (ms: number | null): string => (ms === null ? 'not learned yet' : `${Math.round(ms / 1000)} s`);

/**
 * Decides one scheduled silence check at `ctx.now` (silence counted from `watchingSince` at the
 * earliest): a silent source that reported again is resumed
 * (its alert resolved with a history entry); a source silent for longer than its threshold, outside
 * declared quiet hours and expected silences, is declared silent and raises a `vigil.source-silent`
 * alert with its last report time and usual cadence (both may happen in one check: one report
 * during a long silence, then quiet again). Nothing to say: no events.
 */
export function decideSilenceCheck(
  state: SilenceCheckState,
  settings: SilenceSettings,
  ctx: CommandContext,
  check: SilenceCheck = {},
): Decision<SilenceCheckResult> {
  const nowMs = Date.parse(ctx.now);
  const watchingMs = check.watchingSince === undefined ? 0 : Date.parse(check.watchingSince);
  const events: DomainEvent[] = [];
  const silenced: string[] = [];
  const resumed: string[] = [];
  const raisedIds = new Set<string>();
  for (const [source, a] of state.monitoring.sources) {
    if (a.silent) {
      if (a.lastSeenAt <= a.silent.lastSeenAt) continue;
      const data: EventData<'SourceResumed'> = {
        source,
        resumedAt: a.lastSeenAt,
        silentSince: a.silent.lastSeenAt,
        alertId: a.silent.alertId,
      };
      events.push({ type: 'SourceResumed', data });
      const resolution: AlertReviewed | undefined = systemResolution(
        state.alerts,
        a.silent.alertId,
        SOURCE_SILENT_RULE,
        `source reported again at ${a.lastSeenAt} (silent since ${a.silent.lastSeenAt})`,
      );
      if (resolution) events.push({ type: DetectionRecord.AlertReviewed, data: resolution });
      resumed.push(source);
      // It may be overdue again already (one report, then quiet): judged below like any other.
    }
    if (!settings.enabled) continue;
    const thresholdMs = silenceThresholdMs(source, a.gaps, settings);
    // A restart after downtime gives every source its threshold again before it is called silent.
    if (
      nowMs - Math.max(Date.parse(a.lastSeenAt), watchingMs) <= thresholdMs ||
      isExpectedQuiet(source, nowMs, settings)
    )
      continue;
    const usual = usualCadenceMs(a.gaps, settings.minSamples);
    let alertId = systemAlertId(state.alerts, SOURCE_SILENT_RULE, source, a.lastSeenAt);
    for (let n = 2; raisedIds.has(alertId); n++)
      alertId = `${systemAlertId(state.alerts, SOURCE_SILENT_RULE, source, a.lastSeenAt)}-${n}`;
    raisedIds.add(alertId);
    const silent: EventData<'SourceWentSilent'> = {
      source,
      kind: a.kind,
      lastSeenAt: a.lastSeenAt,
      usualCadenceMs: usual,
      thresholdMs,
      alertId,
    };
    events.push({ type: 'SourceWentSilent', data: silent });
    events.push({
      type: DetectionRecord.AlertRaised,
      data: systemAlertRaised({
        alertId,
        ruleId: SOURCE_SILENT_RULE,
        groupKey: source,
        at: ctx.now,
        level: 'high',
        severity: 7,
        title:
          `${a.kind === 'collector' ? 'Collector' : 'Source'} went silent: ${source} (last event ` +
          `${a.lastSeenAt}, usual cadence ${seconds(usual)})`,
        facts: {
          source,
          kind: a.kind,
          lastEventAt: a.lastSeenAt,
          usualCadenceSeconds: usual === null ? null : usual / 1000,
          silentAfterSeconds: thresholdMs / 1000,
        },
      }),
    });
    silenced.push(source);
  }
  return accept(events, { silenced, resumed });
}
