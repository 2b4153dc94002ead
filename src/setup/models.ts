import { typedModels, type FoldedModels, type ReadModels } from '../projections/runtime.js';
import type { Projection } from '../projections/types.js';
import { browserSessionsProjection, type BrowserSessionsState } from './projections/browser-sessions.js';
import { deploymentsProjection, type DeploymentsState } from './projections/deployments.js';
import { recoveryProjection, type RecoveryState } from './projections/recovery.js';
import { setupSessionsProjection, type SessionsState } from './projections/setup-sessions.js';

/** Every read model of the setup authority. */
export const AUTHORITY_PROJECTIONS: readonly Projection<unknown>[] = [
  setupSessionsProjection,
  deploymentsProjection,
  recoveryProjection,
  browserSessionsProjection,
] as Projection<unknown>[];

/** The setup authority's read models, each a typed accessor named for its projection. */
export interface AuthorityModels extends ReadModels {
  readonly sessions: SessionsState;
  readonly deployments: DeploymentsState;
  readonly recovery: RecoveryState;
  readonly browsers: BrowserSessionsState;
}

/** Typed accessors over the authority runtime's folded models. */
export function authorityModelsOf(runtime: FoldedModels): AuthorityModels {
  return typedModels<AuthorityModels>(runtime, runtime, {
    sessions: setupSessionsProjection,
    deployments: deploymentsProjection,
    recovery: recoveryProjection,
    browsers: browserSessionsProjection,
  } satisfies Record<Exclude<keyof AuthorityModels, keyof ReadModels>, Projection<unknown>>);
}
