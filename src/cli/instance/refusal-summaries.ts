import { recordDetected } from '../../commands/alerting/detection-step.js';
import type { DetectionSettings } from '../../commands/alerting/evaluate.js';
import type { Writer } from '../../commands/writer.js';
import type { CommandContext, DomainEvent } from '../../commands/decision.js';
import { refusalRecords } from '../../http/access-records.js';
import type { RefusalLedger } from '../../http/refusals.js';

/** The periodic writer of refusal summaries. */
export interface RefusalSummaries {
  /** Appends the summaries of closed intervals (of every interval when `all`). */
  flush(all?: boolean): Promise<void>;
  /** Stops the timer and appends what is still counted. */
  stop(): Promise<void>;
}

/**
 * Appends the ledger's closed intervals as RequestsRefused records, checking a few times per
 * interval; `record` (a JetStream follower's: through the leader) decides where, given the local append.
 */
export function startRefusalSummaries(ledger: RefusalLedger, writer: Writer, intervalSeconds: number, now: () => Date, settings: DetectionSettings,
  record?: (facts: readonly DomainEvent[], ctx: CommandContext, local: () => Promise<void>) => Promise<void>): RefusalSummaries {
  const flush = async (all = false): Promise<void> => {
    const records = refusalRecords(ledger.drain(now(), all));
    if (records.length === 0) return;
    const ctx = { now: now().toISOString() };
    const local = async () => { await recordDetected(writer, records, ctx, settings); };
    await (record ? record(records, ctx, local) : local());
  };
  const timer = setInterval(() => void flush().catch(() => undefined), Math.min(5000, intervalSeconds * 250));
  timer.unref();
  return {
    flush,
    async stop() {
      clearInterval(timer);
      await flush(true);
    },
  };
}
