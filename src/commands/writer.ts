import type { LogCut } from '../log/event-log.js';
import type { LmdbEventLog } from '../log/lmdb-log.js';
import type { LogRecord, NewRecord } from '../kernel/record.js';
import type { ProjectionRuntime } from '../projections/runtime.js';
import type { CommandContext, Decision, DomainEvent, Rejection } from './decision.js';

/** The outcome of an executed command, once its records are durable. */
export type Outcome<R> =
  | { readonly ok: true; readonly result: R; readonly records: readonly LogRecord[] }
  | { readonly ok: false; readonly rejection: Rejection };

/**
 * The single writer: decides commands one at a time and group-commits their events. Only the
 * write pipeline (src/commands/pipeline.ts) and the wiring that builds it hold one.
 */
export interface Writer<M = unknown> {
  /**
   * Runs `decide` against the current read models, appends its events and applies them to the
   * read models before the next command is decided; resolves once the records are durable.
   */
  execute<R>(decide: (models: M) => Decision<R>, ctx: CommandContext): Promise<Outcome<R>>;
  /** Appends facts that need no decision (audit records); resolves once durable. */
  record(events: readonly DomainEvent[], ctx: CommandContext): Promise<readonly LogRecord[]>;
  /**
   * Appends the records of a retention cut and removes the log before it in the same transaction
   * (src/services/retention/expire.ts); `inTransaction` adds the cut's own writes (the carried records'
   * index among them); resolves once the heap models are refolded from the cut (the records the
   * carried index lists first), which they are beside later commands.
   */
  cut(events: readonly DomainEvent[], ctx: CommandContext, cut: RetentionCut): Promise<readonly LogRecord[]>;
  /** The models decisions read, as typed accessors over the runtime (src/projections/models.ts). */
  readonly models: M;
}

/** What a retention cut adds to its batch: where, and its writes (the carried records' index among them). */
export interface RetentionCut {
  readonly at: LogCut;
  readonly inTransaction: (records: readonly LogRecord[]) => void;
}

/**
 * Creates the writer over a log and its projection runtime. It knows nothing of detection: a
 * command that carries evidence runs the detection step itself (src/commands/alerting/detection-step.ts).
 */
export function createWriter<M>(log: LmdbEventLog, runtime: ProjectionRuntime, models: M): Writer<M> {
  function stage(
    events: readonly DomainEvent[],
    ctx: CommandContext,
    cut?: RetentionCut,
  ): { records: readonly LogRecord[]; durable: Promise<void> } {
    const batch: NewRecord[] = events.map((e) => ({
      type: e.type,
      at: ctx.now,
      ...(ctx.actor ? { actor: ctx.actor } : {}),
      data: e.data,
    }));
    let inTxn: ((recs: readonly LogRecord[]) => void) | undefined;
    const staged = log.stage(
      batch,
      (recs) => {
        inTxn!(recs);
        cut?.inTransaction(recs);
      },
      cut?.at,
    );
    inTxn = runtime.apply(staged.records, staged.kept);
    // From here on only the kept records are held (src/log/record.ts, keptRecord).
    const { kept } = staged;
    const settled = staged.durable.then(() => runtime.settle(kept));
    // The heap models are refolded from the cut once it is durable (the records before it are gone then).
    return { records: kept, durable: cut ? settled.then(() => runtime.refold(cut.at.firstSeq)) : settled };
  }

  /** Decides and stages a command: the outcome it will have, and when it is durable. */
  function decideAndStage<R>(
    decide: (models: M) => Decision<R>,
    ctx: CommandContext,
  ): { outcome: Outcome<R>; durable?: Promise<void> } {
    const decision = decide(models);
    const events = decision.events ?? [];
    const staged = events.length > 0 ? stage(events, ctx) : undefined;
    const outcome: Outcome<R> = decision.ok
      ? { ok: true, result: decision.result, records: staged?.records ?? [] }
      : { ok: false, rejection: decision.rejection };
    return staged ? { outcome, durable: staged.durable } : { outcome };
  }

  return {
    models,
    // Not an async function, nor is any caller on the ingest path (src/http/request-context.ts,
    // src/services/metrics/writer-metrics.ts): an async one would keep `decide`, and with it the command's
    // input (a batch's parsed events), until the batch is durable.
    execute(decide, ctx) {
      try {
        const { outcome, durable } = decideAndStage(decide, ctx);
        return durable ? durable.then(() => outcome) : Promise.resolve(outcome);
      } catch (err) {
        return Promise.reject(err as Error);
      }
    },
    async cut(events, ctx, cut) {
      const staged = stage(events, ctx, cut);
      await staged.durable;
      return staged.records;
    },
    async record(events, ctx) {
      if (events.length === 0) return [];
      const staged = stage(events, ctx);
      await staged.durable;
      return staged.records;
    },
  };
}
