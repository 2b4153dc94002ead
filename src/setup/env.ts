import type { Pipeline } from '../commands/pipeline.js';
import type { AuthorityModels } from './models.js';
import type { AccountRegistry } from './accounts.js';
import type { AuthorityConfig } from './config.js';
import type { RecoveryKey } from './recovery-crypto.js';

/** What the authority's HTTP layer needs (`createAuthorityApp(deps)`). */
export interface AuthorityDeps {
  readonly pipeline: Pipeline<AuthorityModels>;
  readonly accounts: AccountRegistry;
  readonly config: AuthorityConfig;
  readonly recoveryKey: RecoveryKey;
  /** The current time (a parameter so tests can move it). */
  readonly now: () => Date;
  /** The authority's public URL, without a trailing slash (origin checks, links, provisioning). */
  readonly publicUrl: () => string;
  /** Operational log lines (never secrets). */
  readonly log: (line: Record<string, unknown>) => void;
}

/** The signed-in browser of a request. */
export interface BrowserContext {
  readonly tenantId: string;
  readonly userId: string;
  readonly sessionHash: string;
  readonly csrfHash: string;
}

/** Hono environment of the authority app. */
export interface AuthorityEnv {
  Variables: { requestId: string; browser: BrowserContext };
}
