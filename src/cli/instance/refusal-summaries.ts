import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
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
export function startRefusalSummaries(
  ledger: RefusalLedger,
  pipeline: Pipeline<WriteModels>,
  intervalSeconds: number,
  now: () => Date,
  record?: (facts: readonly DomainEvent[], ctx: CommandContext, local: () => Promise<void>) => Promise<void>,
): RefusalSummaries {
  const flush = async (all = false): Promise<void> => {
    const records = refusalRecords(ledger.drain(now(), all));
    if (records.length === 0) return;
    const ctx = { now: now().toISOString() };
    const local = async () => {
      await pipeline.record(records, ctx);
    };
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
