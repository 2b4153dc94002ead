import type { Context } from 'hono';
import type { CommandContext, Decision } from '../commands/decision.js';
import type { ReadModels } from '../projections/runtime.js';
import type { Derived } from '../commands/writer.js';
import type { AppDeps, AppEnv } from './env.js';
import { STATUS_OF, fromRejection } from './errors.js';

/** The command context of a request: time, the authenticated actor, the request id. */
export function commandContext(c: Context<AppEnv>, deps: AppDeps): CommandContext {
  const p = c.get('principal');
  return { now: deps.now().toISOString(), requestId: c.get('requestId'), ...(p ? { actor: { id: p.id, authentication: p.authentication } } : {}) };
}

/**
 * Executes a command for a request, committing the request's access event and audit record in
 * the same batch as the command's events (one durable commit), and returns the result or throws
 * the rejection as an HttpError. `durationMs` of such an audit record runs to the decision.
 */
export async function executeAudited<R>(c: Context<AppEnv>, deps: AppDeps, decide: (m: ReadModels) => Decision<R>, successStatus: number): Promise<{ result: R; derived: Derived }> {
  const outcome = await deps.writer.execute(decide, commandContext(c, deps), (d) => c.get('auditRecords')(d.ok ? successStatus : STATUS_OF[d.rejection.kind]));
  c.set('audited', true);
  if (!outcome.ok) throw fromRejection(outcome.rejection);
  return { result: outcome.result, derived: outcome.derived };
}

/** An ingestion result with the alerts and incidents its evidence raised (spec 2.2). */
export function withDetections<T extends { alerts: unknown[]; incidents: unknown[] }>(r: { result: T; derived: Derived }): T {
  return { ...r.result, alerts: [...r.derived.alerts], incidents: [...r.derived.incidents] };
}
