import * as v from 'valibot';
import type { LogRecord } from '../../kernel/record.js';
import { targetOf, type ExportDestination } from './config.js';
import type { CursorStore } from './cursor.js';
import { exportItems, type ExportItem } from './items.js';
import type { Sender } from './senders.js';
import type { ExportObservation } from '../../commands/export-state.js';

const Count = v.pipe(v.number(), v.integer());

/** A DestinationStatus as `GET /api/v1/exports` answers it (published in docs/openapi.json). */
export const DestinationStatusSchema = v.strictObject({
  name: v.string(),
  kind: v.picklist(['webhook', 'otlp', 'syslog']),
  target: v.string(),
  carries: v.array(v.string()),
  includeRaw: v.boolean(),
  cursor: Count,
  head: Count,
  lagRecords: Count,
  state: v.picklist(['delivering', 'retrying', 'failing']),
  lastSuccessAt: v.optional(v.string()),
  lastError: v.optional(v.strictObject({ at: v.string(), message: v.string() })),
  delivered: Count,
  failedAttempts: Count,
  deliveredBy: v.optional(v.literal('leader')),
});

/** One destination's delivery state, as `GET /api/v1/exports` shows it. */
export interface DestinationStatus {
  readonly name: string;
  readonly kind: ExportDestination['kind'];
  readonly target: string;
  readonly carries: readonly string[];
  readonly includeRaw: boolean;
  /** Every item of the records up to this sequence has been delivered. */
  readonly cursor: number;
  /** The durable log head. */
  readonly head: number;
  readonly lagRecords: number;
  readonly state: 'delivering' | 'retrying' | 'failing';
  readonly lastSuccessAt?: string;
  readonly lastError?: { readonly at: string; readonly message: string };
  /** Items delivered since the service started. */
  readonly delivered: number;
  readonly failedAttempts: number;
  /**
   * On a JetStream cluster's follower: the leader delivers, and `cursor` and `state` are what the
   * log records of its delivery (`delivered` and `failedAttempts` are this node's: 0).
   */
  readonly deliveredBy?: 'leader';
}

/** A destination following the log. */
export interface DestinationRunner {
  /** The log is durable up to `seq`. */
  notify(seq: number): void;
  status(): DestinationStatus;
  /** Stops after the attempt in flight (bounded by the destination's time-out). */
  stop(): Promise<void>;
}

/** What a runner needs from outside; the clock and randomness are passed in so tests drive them. */
export interface RunnerDeps {
  readonly destination: ExportDestination;
  readonly origin: string;
  readonly read: (from: number, to: number) => Iterable<LogRecord>;
  /** The durable head when the runner starts. */
  readonly head: number;
  readonly cursor: CursorStore;
  readonly sender: Sender;
  readonly now: () => number;
  readonly random: () => number;
  /** Called when the destination becomes failing or delivers again (the caller records it in the log). */
  readonly onState: (o: ExportObservation) => void;
}

/** Records read per step before yielding to the event loop. */
const SCAN = 2000;
const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 60_000;

/** Exponential backoff with full jitter over the upper half: attempt 1 waits 250-500 ms, capped at a minute. */
export function backoffMs(attempt: number, random: number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.min(attempt - 1, 20));
  return Math.round(ceiling * (0.5 + random / 2));
}

/**
 * Starts delivering a destination's items in log order from its durable cursor: at-least-once
 * (the cursor moves only after the receiver took a batch), one batch in flight, retries with
 * backoff and jitter or the receiver's `Retry-After`. It reads the log on its own, so a slow or
 * dead destination never holds up ingest or another destination; it only falls behind (`lag`).
 */
export function startDestination(deps: RunnerDeps): DestinationRunner {
  const d = deps.destination;
  const iso = (ms: number) => new Date(ms).toISOString();
  let head = deps.head;
  let cursor = Math.min(deps.cursor.load(), head);
  let readSeq = cursor;
  let queue: ExportItem[] = [];
  let stopped = false;
  let failing = false;
  let failedAttempts = 0;
  let delivered = 0;
  let lastSuccessMs: number | undefined;
  let lastError: { at: string; message: string } | undefined;
  /** Since when records have been waiting without a delivery (for `failingAfterSeconds`). */
  let waitingSinceMs: number | undefined;
  let wake: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;

  const sleep = (ms?: number) =>
    new Promise<void>((resolve) => {
      wake = resolve;
      if (ms !== undefined) timer = setTimeout(resolve, ms);
    }).finally(() => {
      clearTimeout(timer);
      wake = undefined;
    });

  const observe = (state: 'failing' | 'delivering', reason: string) => {
    if ((state === 'failing') === failing) return;
    failing = state === 'failing';
    deps.onState({
      destination: d.name,
      kind: d.kind,
      state,
      reason,
      lagRecords: head - cursor,
      ...(lastSuccessMs !== undefined ? { lastSuccessAt: iso(lastSuccessMs) } : {}),
    });
  };

  const checkFailing = () => {
    const lag = head - cursor;
    if (lag > d.maxLagRecords) observe('failing', `${lag} records not delivered (bound ${d.maxLagRecords})`);
    else if (waitingSinceMs !== undefined && deps.now() - waitingSinceMs > d.failingAfterSeconds * 1000) {
      observe('failing', `no delivery for ${d.failingAfterSeconds} s${lastError ? `: ${lastError.message}` : ''}`);
    }
  };

  const moveCursor = async (seq: number, afterDelivery: boolean) => {
    if (seq <= cursor) return;
    await deps.cursor.save(seq, afterDelivery);
    cursor = seq;
  };

  /** Reads records into the queue until a batch is full or `SCAN` records were read. */
  const fill = () => {
    let scanned = 0;
    while (queue.length < d.batchSize && readSeq < head && scanned < SCAN) {
      const to = Math.min(head, readSeq + (SCAN - scanned));
      for (const record of deps.read(readSeq + 1, to)) {
        queue.push(...exportItems(record, d, deps.origin));
        readSeq = record.seq;
        scanned++;
        if (queue.length >= d.batchSize) break;
      }
    }
  };

  const loop = async () => {
    while (!stopped) {
      fill();
      if (queue.length === 0) {
        await moveCursor(readSeq, false);
        waitingSinceMs = undefined;
        if (failing && head - cursor <= d.maxLagRecords / 2) observe('delivering', 'caught up');
        if (readSeq >= head) await sleep();
        else await new Promise((r) => setImmediate(r));
        continue;
      }
      waitingSinceMs ??= deps.now();
      const batch = queue.slice(0, d.batchSize);
      const result = await deps.sender.send(batch);
      if (result.ok) {
        queue = queue.slice(batch.length);
        await moveCursor(queue.length === 0 ? readSeq : queue[0]!.seq - 1, true);
        delivered += batch.length;
        failedAttempts = 0;
        lastSuccessMs = deps.now();
        waitingSinceMs = queue.length > 0 || readSeq < head ? lastSuccessMs : undefined;
        if (failing && head - cursor <= d.maxLagRecords / 2) observe('delivering', 'delivered again');
        else checkFailing();
        continue;
      }
      failedAttempts++;
      lastError = { at: iso(deps.now()), message: result.error.slice(0, 500) };
      checkFailing();
      if (!stopped) await sleep(result.retryAfterMs ?? backoffMs(failedAttempts, deps.random()));
    }
  };

  const running = loop();
  return {
    notify(seq) {
      if (seq <= head) return;
      head = seq;
      if (readSeq < head) waitingSinceMs ??= deps.now();
      if (failedAttempts === 0) wake?.();
    },
    status: () => ({
      name: d.name,
      kind: d.kind,
      target: targetOf(d),
      carries: [...d.carries],
      includeRaw: d.includeRaw,
      cursor,
      head,
      lagRecords: head - cursor,
      state: failing ? 'failing' : failedAttempts > 0 ? 'retrying' : 'delivering',
      ...(lastSuccessMs !== undefined ? { lastSuccessAt: iso(lastSuccessMs) } : {}),
      ...(lastError ? { lastError } : {}),
      delivered,
      failedAttempts,
    }),
    async stop() {
      stopped = true;
      wake?.();
      await running;
      deps.sender.close();
    },
  };
}
