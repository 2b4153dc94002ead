import type { Context } from 'hono';
import type * as v from 'valibot';
import type { CommandContext, Decision } from '../commands/decision.js';
import type { AlertsState } from '../projections/alerts.js';
import { readJsonBody } from './body.js';
import type { AppDeps, AppEnv } from './env.js';
import { parseOr400 } from './errors.js';
import { commandContext, executeAudited } from './request-context.js';

/** A decider over alerts and incidents that acts on one of them, named by the route's path. */
export type TargetedDecider<B, R> = (alerts: AlertsState, id: string, body: B, ctx: CommandContext) => Decision<R>;

/**
 * The handler shape every alert and incident command route shares: the JSON body validated by
 * `schema`, the target from path parameter `param`, the decider run (audited, with the detection
 * step) over the alerts slice; resolves with its result.
 */
export async function runTargeted<S extends v.GenericSchema, R>(
  c: Context<AppEnv>,
  deps: AppDeps,
  param: string,
  schema: S,
  decide: TargetedDecider<v.InferOutput<S>, R>,
  status: number,
): Promise<R> {
  const body = parseOr400(schema, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
  const ctx = commandContext(c, deps);
  const { result } = await executeAudited(c, deps, (m) => decide(m.alerts, c.req.param(param)!, body, ctx), status);
  return result;
}
