import type { LogRecord } from '../kernel/record.js';
import { accept, type CommandContext, type Decision, type DomainEvent, type Rejection } from './decision.js';
import { NO_DETECTIONS, detectIn, type Detections, type Detector } from './alerting/detection-step.js';
import type { RetentionCut, Writer } from './writer.js';

/**
 * A command for the write pipeline: what to decide against the models, in which context, and the
 * facts that depend on the decision (a request's access and audit records), committed in its batch.
 */
export interface Command<M, R> {
  readonly decide: (models: M) => Decision<R>;
  readonly ctx: CommandContext;
  readonly facts?: (decision: Decision<R>) => readonly DomainEvent[];
}

/**
 * A retention cut: the records it carries forward are copies of evidence that was detected when it
 * was first appended, so this is the one command that says it must not run detection again.
 */
export interface CutCommand {
  readonly events: readonly DomainEvent[];
  readonly ctx: CommandContext;
  readonly cut: RetentionCut;
  readonly detection: 'none';
}

/** A dispatched command once its batch is durable: its result and what its evidence raised, or its rejection. */
export type Dispatched<R> =
  | { readonly ok: true; readonly result: R; readonly detections: Detections; readonly records: readonly LogRecord[] }
  | { readonly ok: false; readonly rejection: Rejection };

/**
 * The one write pipeline: every write of a service goes through `dispatch` (or `cut`), which
 * decides against the write side's models, runs detection on whatever evidence the batch carries,
 * appends, and resolves once the batch is durable. No caller assembles these steps, so none can
 * skip detection.
 */
export interface Pipeline<M> {
  dispatch<R>(command: Command<M, R>): Promise<Dispatched<R>>;
  /** Appends facts that need no decision (audit records, refusal summaries), detected like any other batch. */
  record(events: readonly DomainEvent[], ctx: CommandContext): Promise<Detections>;
  /** Appends a retention cut and removes the log before it (src/services/retention/expire.ts). */
  cut(command: CutCommand): Promise<readonly LogRecord[]>;
  /** The models decisions read, for services that look before they dispatch. */
  readonly models: M;
}

/** The pipeline over a service's single writer; `detector` absent: the service holds no evidence. */
export function createPipeline<M>(writer: Writer<M>, detector?: Detector<M>): Pipeline<M> {
  // Not async, nor the functions between it and the route: an async function would keep `decide`,
  // and with it the command's input (a batch's parsed events), until the batch is durable.
  function dispatch<R>(command: Command<M, R>): Promise<Dispatched<R>> {
    const { decide, ctx, facts } = command;
    return writer
      .execute((m) => {
        const decision = decide(m);
        return detectIn(m, decision, facts ? facts(decision) : [], ctx, detector);
      }, ctx)
      .then((o): Dispatched<R> =>
        o.ok
          ? { ok: true, result: o.result.result, detections: o.result.detections, records: o.records }
          : { ok: false, rejection: o.rejection },
      );
  }
  return {
    dispatch,
    models: writer.models,
    record: (events, ctx) =>
      dispatch({ decide: () => accept(events, undefined), ctx }).then((o) => (o.ok ? o.detections : NO_DETECTIONS)),
    cut: (command) => writer.cut(command.events, command.ctx, command.cut),
  };
}
