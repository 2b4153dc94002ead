import type { CommandContext } from '../../commands/decision.js';
import { decideIngestRaw, type IngestRaw } from '../../commands/ingest-raw.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { Metrics } from '../metrics/metrics.js';
import { syslogRfc5424 } from '../../normalizers/syslog-rfc5424.js';
import { syslogRejectionEvent, type ListenerRecord, type SyslogRejectionReason } from './syslog-rejection.js';

/** Messages held (queued or being written) past which a listener stops reading (TCP) or drops and counts (UDP). */
export const MAX_PENDING_MESSAGES = 20_000;
/** Messages per command at most. */
const MAX_BATCH = 2_000;

/** What a listener hands its messages to. */
export interface SyslogIntake {
  /** Takes one received message; false once the intake is full (a stream pauses until `whenRoom`). */
  add(record: ListenerRecord, rejection?: { reason: SyslogRejectionReason; error: string }): boolean;
  /** Whether another message would be taken without passing the bound (UDP drops and counts otherwise). */
  hasRoom(): boolean;
  /** Calls `resume` once when the intake has room again. */
  whenRoom(resume: () => void): void;
  /** Writes whatever is queued and waits for it to be durable. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  stop(): Promise<void>;
}

/** What an intake needs: the write pipeline, the clock, metrics and the operational log. */
export interface IntakeDeps {
  readonly pipeline: Pipeline<WriteModels>;
  readonly now: () => Date;
  readonly metrics?: Metrics;
  readonly log: (line: Record<string, unknown>) => void;
  readonly batchMs: number;
  /** Seconds to wait while the store's disk is past its flood mark (docs/monitoring.md), else undefined. */
  readonly refusesWrites?: () => number | undefined;
  /** On a JetStream cluster (the same in syslog-listeners.ts): where a batch goes and how large one may be. */
  readonly cluster?: SyslogCluster;
}

/**
 * How a node of a JetStream cluster writes a batch: `submit` runs `local` on the leader and
 * forwards the command to the leader otherwise, resolving once it is durable there. A batch is cut
 * to about `batchBytes` (it travels as one NATS message), and one that no leader took (during a
 * leader change) is offered again, with the same time, for up to `retrySeconds`.
 */
export interface SyslogCluster {
  submit(batch: readonly SyslogPending[], ctx: CommandContext, local: () => Promise<void>): Promise<void>;
  readonly batchBytes: number;
  readonly retrySeconds: number;
}

/** What one message adds to a forwarded batch, at most: the raw record and, on the leader, its event both hold it. */
const forwardedBytes = (p: { record: ListenerRecord }) => 2 * Buffer.byteLength(p.record.message) + 2048;

/** While the disk is past its flood mark, held messages are offered to the writer again this often. */
const FLOOD_RECHECK_MS = 1000;

/** One message as a listener took it (and why it refused it, when it did). */
export interface SyslogPending {
  readonly record: ListenerRecord;
  readonly rejection?: { readonly reason: SyslogRejectionReason; readonly error: string };
}
type Pending = SyslogPending;

/**
 * The command of one batch (pure, given the time): each message through the syslog-rfc5424
 * normalizer; one it refuses (or an oversized frame) becomes a rejection record. The leader of a
 * cluster derives it again from a follower's forwarded batch.
 */
export function syslogCommand(
  batch: readonly SyslogPending[],
  ingestedAt: string,
): { cmd: IngestRaw; accepted: number; rejected: number } {
  let accepted = 0;
  let rejected = 0;
  const normalized = batch.map(({ record, rejection }): { record: unknown; events: NormalizedEvent[] } => {
    const r = rejection ? undefined : syslogRfc5424.normalize(record, { ingestedAt });
    if (r?.ok) {
      accepted++;
      return { record, events: r.events };
    }
    rejected++;
    const why = rejection ?? { reason: 'not_rfc5424' as const, error: r && !r.ok ? r.error : 'not RFC 5424' };
    return { record, events: [syslogRejectionEvent(record, why.reason, why.error, ingestedAt)] };
  });
  return { cmd: { normalizer: syslogRfc5424.name, normalized }, accepted, rejected };
}

/**
 * Gathers one listener's messages for `batchMs` and writes them as one command: each message goes
 * through the syslog-rfc5424 normalizer; one it refuses (or an oversized frame) becomes a
 * rejection record. Both are stored raw beside their events, and detections run on the batch.
 */
export function createSyslogIntake(listener: string, deps: IntakeDeps): SyslogIntake {
  let queue: Pending[] = [];
  let inFlight = 0;
  let timer: NodeJS.Timeout | undefined;
  const writing = new Set<Promise<void>>();
  let waiting: Array<() => void> = [];
  const actor = { id: `syslog:${listener}`, authentication: 'syslog-listener' };

  async function write(batch: readonly Pending[]): Promise<void> {
    const ctx: CommandContext = { now: deps.now().toISOString(), actor };
    const { cmd, accepted, rejected } = syslogCommand(batch, ctx.now);
    deps.metrics?.syslogMessages.inc({ listener, outcome: 'accepted' }, accepted);
    deps.metrics?.syslogMessages.inc({ listener, outcome: 'rejected' }, rejected);
    const local = async () => {
      await deps.pipeline.dispatch({ decide: (m) => decideIngestRaw(m, cmd), ctx: ctx });
    };
    try {
      const cluster = deps.cluster;
      if (!cluster) await local();
      else {
        // Event ids derive from the raw record and the time is the same, so offering a batch again is idempotent.
        const until = Date.now() + cluster.retrySeconds * 1000;
        for (let attempt = 1; ; attempt++) {
          try {
            await cluster.submit(batch, ctx, local);
            break;
          } catch (err) {
            if (Date.now() > until) throw err;
            await new Promise((r) => setTimeout(r, Math.min(2000, 250 * attempt)));
          }
        }
      }
    } catch (err) {
      deps.log({
        level: 'error',
        msg: 'syslog batch could not be written',
        listener,
        messages: batch.length,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** Wakes the streams paused on a full intake once there is room again. */
  function wake(): void {
    if (queue.length + inFlight >= MAX_PENDING_MESSAGES || waiting.length === 0) return;
    const resume = waiting;
    waiting = [];
    for (const r of resume) r();
  }

  /**
   * Sends the queue to the writer in batches. The writer decides commands in the order they are
   * executed (synchronously, here), so batches need not wait for each other: the next one is
   * normalized while the last one is being made durable, and batches staged together share a commit.
   */
  function drain(force = false): void {
    timer = undefined;
    // Past the flood mark nothing is written (as the routes answer 507): messages are held, so a TCP
    // sender is paused once the intake is full and UDP datagrams are dropped and counted; writing
    // resumes by itself when space returns. Stopping writes what is held (the mark leaves room).
    if (!force && queue.length > 0 && deps.refusesWrites?.() !== undefined) {
      timer = setTimeout(() => drain(), FLOOD_RECHECK_MS);
      return;
    }
    while (queue.length > 0) {
      let take = Math.min(queue.length, MAX_BATCH);
      const budget = deps.cluster?.batchBytes;
      if (budget !== undefined) {
        let bytes = 0;
        for (let i = 0; i < take; i++) {
          bytes += forwardedBytes(queue[i]!);
          if (bytes > budget && i > 0) {
            take = i;
            break;
          }
        }
      }
      const batch = queue.slice(0, take);
      queue = queue.slice(batch.length);
      inFlight += batch.length;
      const written: Promise<void> = write(batch).finally(() => {
        inFlight -= batch.length;
        writing.delete(written);
        wake();
      });
      writing.add(written);
    }
  }

  return {
    add(record, rejection) {
      queue.push(rejection ? { record, rejection } : { record });
      if (queue.length >= MAX_BATCH) {
        if (timer) clearTimeout(timer);
        drain();
      } else timer ??= setTimeout(drain, deps.batchMs);
      return queue.length + inFlight < MAX_PENDING_MESSAGES;
    },
    hasRoom: () => queue.length + inFlight < MAX_PENDING_MESSAGES,
    whenRoom(resume) {
      if (queue.length + inFlight < MAX_PENDING_MESSAGES) resume();
      else waiting.push(resume);
    },
    async flush() {
      if (timer) clearTimeout(timer);
      drain(true);
      await Promise.all([...writing]);
    },
    async stop() {
      await this.flush();
    },
  };
}
