import type { LmdbEventLog } from '../log/lmdb-log.js';
import type { LogRecord, NewRecord } from '../log/record.js';
import type { ProjectionRuntime, ReadModels } from '../projections/runtime.js';
import type { CommandContext, Decision, DomainEvent, Rejection } from './decision.js';

/** What evaluating a command's evidence added (alerts and incidents), for the caller's result. */
export interface Derived {
  readonly alerts: readonly unknown[];
  readonly incidents: readonly unknown[];
}

/**
 * Evaluates the evidence a batch of events carries (detections): returns events to append in the
 * same batch, and what to report. Runs after every decision, so every route's evidence is evaluated.
 */
export type Augment = (models: ReadModels, events: readonly DomainEvent[], ctx: CommandContext) => Derived & { readonly events: readonly DomainEvent[] };

/** The outcome of an executed command, once its records are durable. */
export type Outcome<R> =
  | { readonly ok: true; readonly result: R; readonly records: readonly LogRecord[]; readonly derived: Derived }
  | { readonly ok: false; readonly rejection: Rejection; readonly derived: Derived };

const NOTHING: Derived = { alerts: [], incidents: [] };

/** The single writer: decides commands one at a time and group-commits their events. */
export interface Writer {
  /**
   * Runs `decide` against the current read models, appends its events and applies them to the
   * read models before the next command is decided; resolves once the records are durable.
   */
  execute<R>(decide: (models: ReadModels) => Decision<R>, ctx: CommandContext, also?: (decision: Decision<R>) => readonly DomainEvent[]): Promise<Outcome<R>>;
  /** Appends facts that need no decision (audit records); resolves once durable. */
  record(events: readonly DomainEvent[], ctx: CommandContext): Promise<readonly LogRecord[]>;
  readonly models: ReadModels;
}

/** Creates the writer over a log and its projection runtime. */
export function createWriter(log: LmdbEventLog, runtime: ProjectionRuntime, augment?: Augment): Writer {
  function stage(events: readonly DomainEvent[], ctx: CommandContext): { records: readonly LogRecord[]; durable: Promise<void> } {
    const batch: NewRecord[] = events.map((e) => ({ type: e.type, at: ctx.now, ...(ctx.actor ? { actor: ctx.actor } : {}), data: e.data }));
    let inTxn: ((recs: readonly LogRecord[]) => void) | undefined;
    const staged = log.stage(batch, (recs) => inTxn!(recs));
    inTxn = runtime.apply(staged.records);
    return { records: staged.records, durable: staged.durable.then(() => runtime.settle(staged.records)) };
  }

  return {
    models: runtime,
    async execute(decide, ctx, also) {
      const decision = decide(runtime);
      // Facts about the command (its audit record) share its batch: one commit, one flush.
      const own = also ? [...(decision.events ?? []), ...also(decision)] : decision.events ?? [];
      const extra = augment && own.length > 0 ? augment(runtime, own, ctx) : undefined;
      const events = extra && extra.events.length > 0 ? [...own, ...extra.events] : own;
      const staged = events.length > 0 ? stage(events, ctx) : undefined;
      if (staged) await staged.durable;
      const derived = extra ?? NOTHING;
      return decision.ok ? { ok: true, result: decision.result, records: staged?.records ?? [], derived } : { ok: false, rejection: decision.rejection, derived };
    },
    async record(events, ctx) {
      if (events.length === 0) return [];
      const extra = augment ? augment(runtime, events, ctx) : undefined;
      const staged = stage(extra && extra.events.length > 0 ? [...events, ...extra.events] : events, ctx);
      await staged.durable;
      return staged.records;
    },
  };
}
