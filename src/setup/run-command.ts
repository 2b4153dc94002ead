import type { Context } from 'hono';
import type { Decision } from '../commands/decision.js';
import type { Actor } from '../kernel/record.js';
import type { AuthorityModels } from './models.js';
import { fromRejection } from '../http/errors.js';
import type { AuthorityDeps, AuthorityEnv } from './env.js';

/** Executes one authority command for a request; resolves with its result or throws the rejection as an HttpError. */
export async function runCommand<R>(
  c: Context<AuthorityEnv>,
  deps: AuthorityDeps,
  decide: (m: AuthorityModels) => Decision<R>,
  actor?: Actor,
): Promise<R> {
  const outcome = await deps.pipeline.dispatch({
    decide: decide,
    ctx: { now: deps.now().toISOString(), requestId: c.get('requestId'), ...(actor ? { actor } : {}) },
  });
  if (!outcome.ok) throw fromRejection(outcome.rejection);
  return outcome.result;
}
