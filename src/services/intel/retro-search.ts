import { Worker } from 'node:worker_threads';
import { intelAlerts } from '../../commands/alerting/intel-alerts.js';
import { accept } from '../../commands/decision.js';
import type { Pipeline } from '../../commands/pipeline.js';
import { createIndicatorIndex } from '../../detection/intel/indicator-index.js';
import type { Indicator } from '../../detection/intel/types.js';
import { eventsInTimeOrder, type EventCursor } from '../../projections/evidence-query.js';
import type { ReadModels } from '../../projections/runtime.js';
import type { WriteModels } from '../../projections/models.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { FromRetroWorker, RetroWorkerData } from './retro-worker.js';

/** One feed's search of stored evidence for the indicators it just added, as `GET /api/v1/intel/feeds` shows it. */
export interface RetroProgress {
  readonly state: 'running' | 'done';
  /** The indicators searched for (those the feed's last change added). */
  readonly indicators: number;
  readonly since: string;
  readonly until: string;
  readonly scanned: number;
  /** Events that matched (each raised or grew a `retro: true` alert). */
  readonly matched: number;
  /** False when a bound stopped it before `since`..`until` was read whole. */
  readonly complete: boolean;
  readonly startedAt: string;
  readonly finishedAt: string | null;
}

/** How far one search goes. */
export interface RetroBounds {
  readonly days: number;
  readonly maxEvents: number;
  readonly maxMs: number;
}

/** The searches of each feed: started after a change that added indicators, their progress kept for the feeds list. */
export interface RetroSearches {
  /** Searches the stored evidence of the last `days` for `indicators` of `feed` (a newer search of a feed waits). */
  search(feed: string, version: string, indicators: readonly Indicator[]): Promise<RetroProgress>;
  progress(feed: string): RetroProgress | undefined;
  stop(): Promise<void>;
}

const CHUNK = 500;

/**
 * Retro-matching (docs/intel.md "Back in time"): a feed's newly added indicators, in an index of their own, against
 * the stored events of the last `days`, oldest first, a chunk at a time, scanned in a worker thread of its own
 * (retro-worker.ts; writes and requests go on), bounded in events and time. An event that matches raises (or grows)
 * its threat-intel alert through the pipeline, marked `retro: true`, with the event's own time; an event the alert
 * already holds is not added again.
 */
export function createRetroSearches(o: {
  readonly reads: ReadModels;
  readonly readYourWrites: () => Promise<void>;
  readonly pipeline: Pipeline<WriteModels>;
  readonly bounds: RetroBounds;
  readonly now: () => Date;
  readonly log: (line: Record<string, unknown>) => void;
}): RetroSearches {
  const progress = new Map<string, RetroProgress>();
  const queue = new Map<string, Promise<unknown>>();
  let stopped = false;

  async function run(feed: string, version: string, indicators: readonly Indicator[]): Promise<RetroProgress> {
    // The main thread keeps an index too, to explain the few events the worker finds (intel-alerts.ts).
    const index = createIndicatorIndex();
    index.add(indicators, { feed, version });
    const untilMs = o.now().getTime();
    const sinceMs = untilMs - o.bounds.days * 86_400_000;
    const started = performance.now();
    let p: RetroProgress = {
      state: 'running',
      indicators: indicators.length,
      since: new Date(sinceMs).toISOString(),
      until: new Date(untilMs).toISOString(),
      scanned: 0,
      matched: 0,
      complete: false,
      startedAt: o.now().toISOString(),
      finishedAt: null,
    };
    progress.set(feed, p);
    const worker = await startWorker({ feed, version, indicators: [...indicators] });
    try {
      await o.readYourWrites();
      let after: EventCursor | undefined;
      for (;;) {
        if (stopped) break;
        const chunk = eventsInTimeOrder(o.reads, sinceMs, untilMs, CHUNK, after);
        const ids = new Set(chunk.events.length > 0 ? await worker.scan(chunk.events) : []);
        const hits = chunk.events.filter((e) => ids.has(e.id));
        if (hits.length > 0) {
          const ctx = { now: o.now().toISOString() };
          await o.pipeline.dispatch({
            decide: (m) => accept(intelAlerts({ index }, m.alerts, hits, ctx, { retro: true }).events, null),
            ctx,
          });
        }
        p = { ...p, scanned: p.scanned + chunk.events.length, matched: p.matched + hits.length };
        progress.set(feed, p);
        after = chunk.last;
        if (after === undefined) {
          p = { ...p, complete: true };
          break;
        }
        if (p.scanned >= o.bounds.maxEvents || performance.now() - started >= o.bounds.maxMs) break;
      }
    } finally {
      await worker.close();
    }
    p = { ...p, state: 'done', finishedAt: o.now().toISOString() };
    progress.set(feed, p);
    o.log({
      level: 'info',
      msg: 'intel retro search done',
      feed,
      scanned: p.scanned,
      matched: p.matched,
      complete: p.complete,
    });
    return p;
  }

  return {
    search(feed, version, indicators) {
      const before = queue.get(feed) ?? Promise.resolve();
      const next = before.catch(() => undefined).then(() => run(feed, version, indicators));
      queue.set(feed, next);
      return next;
    },
    progress: (feed) => progress.get(feed),
    async stop() {
      stopped = true;
      await Promise.all([...queue.values()].map((q) => q.catch(() => undefined)));
    },
  };
}

/** The search's worker thread (retro-worker.ts): started with the indicators, asked chunk by chunk. */
async function startWorker(
  data: RetroWorkerData,
): Promise<{ scan(events: NormalizedEvent[]): Promise<string[]>; close(): Promise<void> }> {
  const worker = new Worker(new URL('./retro-worker.js', import.meta.url), { workerData: data });
  let pending: ((m: FromRetroWorker | undefined) => void) | undefined;
  const answer = (m: FromRetroWorker | undefined) => {
    const p = pending;
    pending = undefined;
    p?.(m);
  };
  worker.on('message', (m: FromRetroWorker) => answer(m));
  worker.on('error', (err) => answer({ kind: 'error', message: err.message }));
  worker.on('exit', () => answer(undefined));
  const next = () => new Promise<FromRetroWorker | undefined>((resolve) => (pending = resolve));
  const ready = await next();
  if (ready?.kind !== 'ready') {
    await worker.terminate();
    throw new Error(`the retro worker did not start: ${ready?.kind === 'error' ? ready.message : 'it stopped'}`);
  }
  return {
    async scan(events) {
      const reply = next();
      worker.postMessage(events);
      const m = await reply;
      if (m?.kind === 'hits') return m.ids;
      throw new Error(`the retro worker failed: ${m?.kind === 'error' ? m.message : 'it stopped'}`);
    },
    close: async () => {
      await worker.terminate();
    },
  };
}
