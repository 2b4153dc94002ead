import { statfsSync } from 'node:fs';
import { decideDiskCheck, type DiskSample } from '../../commands/check-disk.js';
import { decideSilenceCheck } from '../../commands/check-silence.js';
import { decideExceptionCheck } from '../../commands/exceptions.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { AlertsState } from '../../projections/alerts.js';
import {
  MONITORING,
  type DiskLevel,
  type MonitoringState,
  type SourceActivity,
  type SourceKind,
} from '../../projections/monitoring.js';
import type { WriteModels } from '../../projections/models.js';
import type { DiskWatermarks, MonitoringSettings } from '../../projections/monitoring-settings.js';

/** The records that say a source (or collector) reported. */
const EVIDENCE_TYPES: ReadonlySet<string> = new Set([
  'EventsIngested',
  'RawRecordsIngested',
  'CollectorSubmissionAccepted',
]);

/** Whether a source declared silent has reported since (its silence ends at the next check). */
const reportedSinceSilence = (a: SourceActivity): boolean =>
  a.silent !== undefined && a.lastSeenAt > a.silent.lastSeenAt;

/** Free and total bytes of a filesystem. */
export interface FsSpace {
  readonly freeBytes: number;
  readonly totalBytes: number;
}

/** The store's disk as last sampled, against the watermarks in force. */
export interface DiskStatus extends DiskSample {
  readonly freePercent: number;
  readonly sampledAt: string;
  readonly watermarks: DiskWatermarks;
}

/** A source silent now, as the health detail lists it. */
export interface SilentSource {
  readonly source: string;
  readonly kind: SourceKind;
  readonly lastSeenAt: string;
  readonly alertId: string;
}

/** The monitor monitoring itself: disk watermarks, silent sources, the scheduler of their checks. */
export interface SelfMonitor {
  /** `degraded` while the disk is past its low (or flood) mark. */
  status(): 'ok' | 'degraded';
  disk(): DiskStatus;
  /**
   * Seconds a refused write is asked to wait, while the disk is past its flood mark; else undefined. Resamples at most
   * once a second.
   */
  refusesWrites(): number | undefined;
  /** The sources and collectors silent now, and how many are watched. */
  sources(): { readonly watched: Record<SourceKind, number>; readonly silent: readonly SilentSource[] };
  /** The log head and how far the read side has folded it. */
  progress(): { readonly headSeq: number; readonly readSeq: number };
  /** Samples the disk and submits the disk and silence checks with the current time in their context. */
  check(): Promise<void>;
  /**
   * Notes a durable record: when it is a batch from a source declared silent, a check runs at once,
   * so the silence is resolved as the source reports again rather than at the next scheduled check.
   */
  noteRecord(record: { readonly type: string; readonly data: unknown }): void;
  /** The settings in force (the configuration's, or the last reloaded). */
  settings(): MonitoringSettings;
  /** Takes new settings (watermarks, cadences, quiet hours) without a restart. */
  reload(settings: MonitoringSettings): void;
  stop(): Promise<void>;
}

/** What the monitor needs. */
export interface SelfMonitorOptions {
  readonly pipeline: Pipeline<WriteModels>;
  readonly settings: MonitoringSettings;
  /** The space of the store's filesystem (statfs of the store path). */
  readonly space: () => FsSpace;
  readonly now: () => Date;
  readonly progress: () => { headSeq: number; readSeq: number };
  readonly log: (line: Record<string, unknown>) => void;
  /** How long a disk sample answers `disk()` and `refusesWrites()` before the next is taken (default 1000 ms). */
  readonly sampleEveryMs?: number;
  /** How long before an exception's end its owner is reminded (`detection.exceptionReminderHours`); default 72 h. */
  readonly exceptionReminderMs?: number;
}

/** The space of the filesystem holding `path`, as an unprivileged writer sees it. */
export function statfsSpace(path: string): () => FsSpace {
  return () => {
    const s = statfsSync(path);
    return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
  };
}

/** The level of `space` against the watermarks: a mark is past when either of its limits (0: off) is. */
export function diskLevel(space: FsSpace, w: DiskWatermarks): DiskLevel {
  const percent = space.totalBytes > 0 ? (space.freeBytes / space.totalBytes) * 100 : 100;
  const past = (bytes: number, pct: number) => (bytes > 0 && space.freeBytes < bytes) || (pct > 0 && percent < pct);
  if (past(w.floodFreeBytes, w.floodFreePercent)) return 'flood';
  if (past(w.lowFreeBytes, w.lowFreePercent)) return 'low';
  return 'ok';
}

const monitoringOf = (m: WriteModels) => m.monitoring;
const alertsOf = (m: WriteModels) => m.alerts;

/** Creates the monitor; `start` runs its checks every `monitoring.checkSeconds`. */
export function createSelfMonitor(o: SelfMonitorOptions): SelfMonitor & { start(): void } {
  let settings = o.settings;
  const watchingSince = o.now().toISOString();
  let last: DiskStatus | undefined;
  let lastAtMs = 0;
  const sampleEveryMs = o.sampleEveryMs ?? 1000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let nudged = false;
  let stopped = false;
  // Silences change only through checks: counted after each, so a batch costs nothing while none is open.
  const countSilent = () => {
    let n = 0;
    for (const a of monitoringOf(o.pipeline.models).sources.values()) if (a.silent) n++;
    return n;
  };
  let silentCount = countSilent();

  const sample = (): DiskStatus => {
    const now = o.now();
    const space = o.space();
    const freePercent = space.totalBytes > 0 ? Math.round((space.freeBytes / space.totalBytes) * 10_000) / 100 : 100;
    last = {
      ...space,
      level: diskLevel(space, settings.disk),
      freePercent,
      sampledAt: now.toISOString(),
      watermarks: settings.disk,
    };
    lastAtMs = performance.now();
    return last;
  };
  // statfs is cheap, but not per request under a flood of them: a sample serves for a second.
  const current = (): DiskStatus => (last && performance.now() - lastAtMs < sampleEveryMs ? last : sample());

  const checkOnce = async (): Promise<void> => {
    const disk = sample();
    const ctx = { now: o.now().toISOString() };
    const crossed = await o.pipeline.dispatch({
      decide: (m) => decideDiskCheck({ monitoring: monitoringOf(m), alerts: alertsOf(m) }, disk, ctx),
      ctx: ctx,
    });
    if (crossed.ok && crossed.records.length > 0)
      o.log({
        level: disk.level === 'ok' ? 'info' : 'warn',
        msg: 'disk watermark crossed',
        disk: disk.level,
        freeBytes: disk.freeBytes,
        totalBytes: disk.totalBytes,
      });
    const silence = await o.pipeline.dispatch({
      decide: (m) =>
        decideSilenceCheck({ monitoring: monitoringOf(m), alerts: alertsOf(m) }, settings.silence, ctx, {
          watchingSince,
        }),
      ctx: ctx,
    });
    silentCount = countSilent();
    const exceptions = await o.pipeline.dispatch({
      decide: (m) => decideExceptionCheck(m, o.exceptionReminderMs ?? 72 * 3_600_000, ctx),
      ctx,
    });
    if (exceptions.ok && (exceptions.result.expired.length > 0 || exceptions.result.reminded.length > 0))
      o.log({
        level: 'info',
        msg: 'exceptions expired or about to',
        expired: exceptions.result.expired.slice(0, 50),
        reminded: exceptions.result.reminded.slice(0, 50),
      });
    if (silence.ok && (silence.result.silenced.length > 0 || silence.result.resumed.length > 0))
      o.log({
        level: 'warn',
        msg: 'source silence',
        silenced: silence.result.silenced.slice(0, 50),
        resumed: silence.result.resumed.slice(0, 50),
      });
  };

  const schedule = (): void => {
    if (timer) clearInterval(timer);
    timer = setInterval(() => {
      void check();
    }, settings.checkSeconds * 1000);
    timer.unref();
  };

  // Checks run one at a time; a failed one is logged (a fatal storage error stops the process by itself).
  function check(): Promise<void> {
    if (stopped) return running;
    running = running
      .then(checkOnce)
      .catch((err: unknown) =>
        o.log({ level: 'error', msg: 'self-monitoring check failed', error: (err as Error)?.message }),
      );
    return running;
  }

  return {
    status: () => (current().level === 'ok' ? 'ok' : 'degraded'),
    disk: current,
    refusesWrites: () => (current().level === 'flood' ? settings.disk.retryAfterSeconds : undefined),
    sources() {
      const watched: Record<SourceKind, number> = { source: 0, collector: 0 };
      const silent: SilentSource[] = [];
      for (const [source, a] of monitoringOf(o.pipeline.models).sources) {
        watched[a.kind]++;
        if (a.silent && !reportedSinceSilence(a))
          silent.push({ source, kind: a.kind, lastSeenAt: a.lastSeenAt, alertId: a.silent.alertId });
      }
      return { watched, silent };
    },
    progress: o.progress,
    check,
    noteRecord(record) {
      if (nudged || silentCount === 0 || !EVIDENCE_TYPES.has(record.type)) return;
      // The record is folded into the model already (it is durable): a silent source it came from
      // has been seen since its silence. Its data is not read: a large record's is kept as its
      // bytes until now (src/log/record.ts, keptRecord), and decoding it costs more than this.
      for (const a of monitoringOf(o.pipeline.models).sources.values()) {
        if (!reportedSinceSilence(a)) continue;
        nudged = true;
        setImmediate(() => {
          nudged = false;
          void check();
        });
        return;
      }
    },
    settings: () => settings,
    reload(next) {
      const rescheduled = next.checkSeconds !== settings.checkSeconds;
      settings = next;
      last = undefined;
      if (rescheduled && timer) schedule();
      void check();
    },
    start() {
      schedule();
      void check();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
    },
  };
}
