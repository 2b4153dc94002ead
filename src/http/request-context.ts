import type { Context } from 'hono';
import type { CommandContext } from '../commands/decision.js';
import type { AppDeps, AppEnv } from './env.js';

/** The command context of a request: time, the authenticated actor, the request id. */
export function commandContext(c: Context<AppEnv>, deps: AppDeps): CommandContext {
  const p = c.get('principal');
  return { now: deps.now().toISOString(), requestId: c.get('requestId'), ...(p ? { actor: { id: p.id, authentication: p.authentication } } : {}) };
}
