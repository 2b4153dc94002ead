import type { FoldedModels, ReadModels } from '../projections/runtime.js';
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
  const state =
    <S>(p: Projection<S>) =>
    (): S =>
      runtime.state<S>(p.name);
  const out = {
    index: runtime.index,
    db: runtime.db.bind(runtime),
    seq: runtime.seq.bind(runtime),
    record: runtime.record.bind(runtime),
  };
  Object.defineProperties(out, {
    sessions: { enumerable: true, get: state(setupSessionsProjection) },
    deployments: { enumerable: true, get: state(deploymentsProjection) },
    recovery: { enumerable: true, get: state(recoveryProjection) },
    browsers: { enumerable: true, get: state(browserSessionsProjection) },
  });
  return out as AuthorityModels;
}

/** The setup sessions read model. */
export const sessionsOf = (m: AuthorityModels): SessionsState => m.sessions;
/** The deployments read model. */
export const deploymentsOf = (m: AuthorityModels): DeploymentsState => m.deployments;
/** The recovery read model. */
export const recoveryOf = (m: AuthorityModels): RecoveryState => m.recovery;
/** The browser sessions read model. */
export const browsersOf = (m: AuthorityModels): BrowserSessionsState => m.browsers;
