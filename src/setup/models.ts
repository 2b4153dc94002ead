import type { ReadModels } from '../projections/runtime.js';
import type { Projection } from '../projections/types.js';
import { browserSessionsProjection, type BrowserSessionsState } from './projections/browser-sessions.js';
import { deploymentsProjection, type DeploymentsState } from './projections/deployments.js';
import { recoveryProjection, type RecoveryState } from './projections/recovery.js';
import { setupSessionsProjection, type SessionsState } from './projections/setup-sessions.js';

/** Every read model of the setup authority. */
export const AUTHORITY_PROJECTIONS: readonly Projection<unknown>[] = [
  setupSessionsProjection, deploymentsProjection, recoveryProjection, browserSessionsProjection,
] as Projection<unknown>[];

/** The setup sessions read model. */
export const sessionsOf = (m: ReadModels): SessionsState => m.state<SessionsState>(setupSessionsProjection.name);
/** The deployments read model. */
export const deploymentsOf = (m: ReadModels): DeploymentsState => m.state<DeploymentsState>(deploymentsProjection.name);
/** The recovery read model. */
export const recoveryOf = (m: ReadModels): RecoveryState => m.state<RecoveryState>(recoveryProjection.name);
/** The browser sessions read model. */
export const browsersOf = (m: ReadModels): BrowserSessionsState => m.state<BrowserSessionsState>(browserSessionsProjection.name);
