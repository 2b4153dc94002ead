import { exhaustive } from '../events/read.js';
import type { DISK_LEVELS, SOURCE_KINDS } from '../events/monitor-events.js';
import type { NormalizedEvent, WriteSideEvent } from '../events/normalized-event.js';
import { GAPS_KEPT, MIN_GAP_MS } from './monitoring-cadence.js';
import { instanceProjection } from './types.js';

/** The name of the monitoring model. */
export const MONITORING = 'monitoring';
/** Sources watched for silence; past it new sources are not watched (a client names its instances). */
export const SOURCES_WATCHED = 10_000;

/** Where the store's free space stands against the watermarks. */
export type DiskLevel = (typeof DISK_LEVELS)[number];
/** A source (adapter + instance) or a collector. */
export type SourceKind = (typeof SOURCE_KINDS)[number];

/** What the monitor knows of one source: when it last reported, its recent gaps, and an ongoing silence. */
export interface SourceActivity {
  kind: SourceKind;
  /** The record time of its last report (Vigil's clock, not the client's). */
  lastSeenAt: string;
  /** Recent gaps between reports, in ms, oldest first (at most GAPS_KEPT). */
  gaps: number[];
  /** The silence declared and not yet ended: the last report before it and the alert raised. */
  silent?: { lastSeenAt: string; alertId: string };
}

/** Watched sources and the disk level last logged. */
export interface MonitoringState {
  sources: Map<string, SourceActivity>;
  disk: { level: DiskLevel; alertId?: string };
}

/** The source key of a normalized event: `adapter/instance`. */
export const sourceKeyOf = (e: Pick<NormalizedEvent, 'source'>): string => `${e.source.adapter}/${e.source.instance}`;
/** The source key of a collector. */
export const collectorKeyOf = (collectorId: string): string => `collector:${collectorId}`;

function seen(s: MonitoringState, key: string, kind: SourceKind, at: string): void {
  const a = s.sources.get(key);
  if (!a) {
    if (s.sources.size < SOURCES_WATCHED) s.sources.set(key, { kind, lastSeenAt: at, gaps: [] });
    return;
  }
  if (at <= a.lastSeenAt) return;
  const gap = Date.parse(at) - Date.parse(a.lastSeenAt);
  if (gap >= MIN_GAP_MS) {
    a.gaps.push(gap);
    if (a.gaps.length > GAPS_KEPT) a.gaps.shift();
  }
  a.lastSeenAt = at;
}

function seenEvents(s: MonitoringState, events: readonly WriteSideEvent[], at: string): void {
  const keys = new Set(events.map(sourceKeyOf));
  for (const key of keys) seen(s, key, 'source', at);
}

/**
 * When each source (adapter + instance) and each collector last reported and at what cadence,
 * with the silences and disk levels the scheduled checks logged (docs/monitoring.md). Vigil's own
 * access and refusal records are not sources.
 */
export const monitoringProjection = instanceProjection({
  name: MONITORING,
  version: 1,
  folds: [
    'EventsIngested',
    'RawRecordsIngested',
    'CollectorSubmissionAccepted',
    'SourceWentSilent',
    'SourceResumed',
    'DiskWatermarkCrossed',
  ],
  initial: (): MonitoringState => ({ sources: new Map(), disk: { level: 'ok' } }),
  evolve(s, record) {
    switch (record.type) {
      case 'EventsIngested':
      case 'RawRecordsIngested':
        seenEvents(s, record.data.events, record.at);
        return s;
      case 'CollectorSubmissionAccepted':
        seen(s, collectorKeyOf(record.data.collectorId), 'collector', record.at);
        seenEvents(s, record.data.events, record.at);
        return s;
      case 'SourceWentSilent': {
        const a = s.sources.get(record.data.source);
        if (a) a.silent = { lastSeenAt: record.data.lastSeenAt, alertId: record.data.alertId };
        return s;
      }
      case 'SourceResumed': {
        const a = s.sources.get(record.data.source);
        if (a) delete a.silent;
        return s;
      }
      case 'DiskWatermarkCrossed': {
        const alertId = record.data.to === 'ok' ? undefined : (s.disk.alertId ?? record.data.alertId);
        s.disk = { level: record.data.to, ...(alertId !== undefined ? { alertId } : {}) };
        return s;
      }
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({ sources: [...s.sources.entries()], disk: s.disk }),
  restore(data) {
    const d = data as { sources: Array<[string, SourceActivity]>; disk: MonitoringState['disk'] };
    return { sources: new Map(d.sources), disk: d.disk };
  },
});
