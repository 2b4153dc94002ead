import type { LogRecord } from '../kernel/record.js';
import type { Context } from 'hono';
import type { Detections } from '../commands/alerting/detection-step.js';
import type { CommandContext, Decision } from '../commands/decision.js';
import type { Dispatched } from '../commands/pipeline.js';
import type { WriteModels } from '../projections/models.js';
import type { AppDeps, AppEnv } from './env.js';
import { STATUS_OF, fromRejection } from './errors.js';

/** The command context of a request: time, the authenticated actor, the request id. */
export function commandContext(c: Context<AppEnv>, deps: AppDeps): CommandContext {
  const p = c.get('principal');
  return {
    now: deps.now().toISOString(),
    requestId: c.get('requestId'),
    ...(p ? { actor: { id: p.id, authentication: p.authentication } } : {}),
  };
}

/**
 * Dispatches a command for a request through the write pipeline, committing the request's access
 * event and audit record in the same batch as the command's events (one durable commit), and
 * returns the result with what its evidence raised, or throws the rejection as an HttpError.
 * `durationMs` of such an audit record runs to the decision.
 */
export function executeAudited<R>(
  c: Context<AppEnv>,
  deps: AppDeps,
  decide: (m: WriteModels) => Decision<R>,
  successStatus: number,
): Promise<{ result: R; detections: Detections; records: readonly LogRecord[] }> {
  // Not async: it would hold `decide` until the batch is durable (src/commands/pipeline.ts).
  const facts = (d: Decision<R>) => c.get('auditRecords')(d.ok ? successStatus : STATUS_OF[d.rejection.kind]);
  return deps.pipeline.dispatch({ decide, facts, ctx: commandContext(c, deps) }).then((outcome: Dispatched<R>) => {
    c.set('audited', true);
    if (!outcome.ok) throw fromRejection(outcome.rejection);
    return { result: outcome.result, detections: outcome.detections, records: outcome.records };
  });
}

/** The opening of an ingestion answer whose `accepted` is the request's own JSON text. */
const ACCEPTED_OPEN = Buffer.from('{"accepted":');

/**
 * The 202 answer of an ingest route: the ingestion result with what its evidence raised. A client
 * sending `Prefer: return=minimal` (RFC 7240) gets it without the echoed events: `accepted` is
 * replaced by its count, `acceptedCount`, and the answer says `Preference-Applied`.
 *
 * `echo`, when given, stands for `accepted` (which the result then leaves out): JSON text of
 * exactly the accepted events, the request's own array, which the events route passes when every
 * record of it was accepted as parsed, and their count. The answer then carries those bytes
 * instead of serializing the same events again (for a batch of 1,000 events, the largest cost of
 * an answer), and nothing keeps the parsed events while the batch is on its way to disk.
 * `refused` lists the records of the batch that were not accepted (the raw routes; empty otherwise).
 */
export function ingestionAnswer<T extends { accepted: unknown[]; alerts: unknown[]; incidents: unknown[] }>(
  c: Context<AppEnv>,
  r: { result: T; detections: Detections },
  echo?: AcceptedEcho,
  refused: readonly unknown[] = [],
): Response {
  const { accepted, ...detected } = withDetections(r);
  // Always present, empty when every record was accepted (docs/api.md, "The ingestion result").
  const rest = { ...detected, refused };
  if (/(^|[,\s])return=minimal\b/i.test(c.req.header('prefer') ?? '')) {
    c.header('Preference-Applied', 'return=minimal');
    return c.json({ acceptedCount: echo?.count ?? accepted.length, ...rest }, 202);
  }
  if (!echo) return c.json({ accepted, ...rest }, 202);
  // `rest` serialized is `{"duplicates":…}`: its members follow `accepted` in one object.
  const members = Buffer.from(`,${JSON.stringify(rest).slice(1)}`);
  return c.body(Buffer.concat([ACCEPTED_OPEN, echo.json, members]), 202, { 'Content-Type': 'application/json' });
}

/** The accepted events of an answer as the request's own JSON text (`ingestionAnswer`). */
export interface AcceptedEcho {
  readonly json: Uint8Array;
  readonly count: number;
}

/** An ingestion result with the alerts and incidents its evidence raised (spec 2.2). */
export function withDetections<T extends { alerts: unknown[]; incidents: unknown[] }>(r: {
  result: T;
  detections: Detections;
}): T {
  return { ...r.result, alerts: [...r.detections.alerts], incidents: [...r.detections.incidents] };
}
