import type { ApiRequestAudited } from '../events/record-types.js';
import type { Searcher } from '../services/hunt/searches.js';
import type { FeedRunner } from '../services/intel/feed-runner.js';
import type { RetroSearches } from '../services/intel/retro-search.js';
import type { CommandContext, DomainEvent } from '../commands/decision.js';
import type { Pipeline } from '../commands/pipeline.js';
import type { CredentialRegistry, Principal } from '../auth/registry.js';
import type { MeshIdentity } from '../auth/mesh-identity.js';
import type { Config } from '../services/config-schema.js';
import type { CidrSet } from '../kernel/cidr.js';
import type { Reads, WriteModels } from '../projections/models.js';
import type { GraphPage, GraphQuery } from '../projections/graph-query.js';
import type { IngestAdmission, IngestTicket } from './admission.js';
import type { RefusalLedger } from './refusals.js';
import type { Transparency } from '../log/checkpointer.js';
import type { LogVerdict } from './routes/log.js';
import type { ReporterStatus } from '../services/deployment-reporter.js';
import type { DestinationStatus } from '../services/export/destination.js';
import type { Metrics } from '../services/metrics/metrics.js';
import type { SelfMonitor } from '../services/monitoring/self-monitor.js';
import type { WitnessHealth } from '../services/witness/witness-push.js';
import type { RuleCosts } from '../commands/alerting/rule-costs.js';

/** What the HTTP layer needs from the rest of the service (`createApp(deps)`). */
export interface AppDeps {
  /** The one write pipeline: commands, with the access records of a request and detection on their evidence. */
  readonly pipeline: Pipeline<WriteModels>;
  /**
   * What read handlers read, never the writer's own models: the write side's models and the read
   * side's databases (src/projections/read-side/).
   */
  readonly reads: Reads;
  /**
   * Resolves once `reads` holds every write acknowledged before the call, so a read handler that
   * awaits it first sees every write acknowledged before its request (bounded: 503 when the read
   * side is too far behind).
   */
  readonly readYourWrites: () => Promise<void>;
  readonly registry: CredentialRegistry;
  readonly config: Config;
  /** The current time (a parameter so tests can move it). */
  readonly now: () => Date;
  /** The TCP peer of a request, or undefined when there is no socket (`app.request()` in tests). */
  readonly peerOf: (raw: unknown) => string | undefined;
  /** The TCP peer's port (asked of the mesh daemon with the address), or undefined with no socket. */
  readonly peerPortOf?: (raw: unknown) => number | undefined;
  /** Identity through the local mesh daemon (`auth.mesh`); absent when not configured. */
  readonly mesh?: MeshIdentity;
  /** Operational log lines (never secrets). */
  readonly log: (line: Record<string, unknown>) => void;
  /** Failed-authentication throttling and the counts of refused requests. */
  readonly refusals: RefusalLedger;
  /** The bound on ingest in flight (back-pressure). */
  readonly admission: IngestAdmission;
  /** Graph queries, answered by the read side's worker. */
  readonly graph: (query: GraphQuery) => Promise<GraphPage | undefined>;
  /** Signed checkpoints and proofs of the log (absent where none are kept: the log routes answer 404). */
  readonly transparency?: Transparency;
  /**
   * Verifies the log as `vigil log verify` does, off the writer's thread (src/cli/instance/live-verify.ts); absent:
   * `GET /api/v1/log/verify` answers 404.
   */
  readonly verifyLog?: () => Promise<LogVerdict>;
  /**
   * The deployment reporter's view of its reporting to the setup authority (absent when no deployment is configured).
   */
  readonly deployment?: () => ReporterStatus | undefined;
  /** Each export destination's delivery state (absent or empty: export is off). */
  readonly exports?: () => DestinationStatus[];
  /** Prometheus metrics (`GET /metrics`); createApp makes a registry of its own when none is given. */
  readonly metrics?: Metrics;
  /** What each rule has cost since the process started (absent: the rule pages and /metrics show none). */
  readonly ruleCosts?: RuleCosts;
  /** Disk watermarks, silent sources and health detail (absent: no self-monitoring, health is `ok`). */
  readonly monitor?: SelfMonitor;
  /** How fresh the witnesses' cosignatures of the checkpoints are, and each pushed witness (absent: off). */
  readonly witnesses?: () => WitnessHealth;
  /** The threat intelligence feeds the service fetches (`intel.feeds`; absent: none). */
  readonly intelFeeds?: Pick<FeedRunner, 'status' | 'pollNow'>;
  /** The searches of stored evidence for indicators feeds add (`intel.retroDays`; absent: none). */
  readonly intelRetro?: Pick<RetroSearches, 'search' | 'progress'>;
  /** Searches of stored evidence (`POST /api/v1/search`), in a worker thread of their own (absent: 404). */
  readonly search?: Searcher;
  /** Appends a request's access records (a JetStream follower sends them to the leader); `local` appends them here. */
  readonly recordAccess?: (
    facts: readonly DomainEvent[],
    ctx: CommandContext,
    local: () => Promise<void>,
  ) => Promise<void>;
}

/** The request-scoped values middleware sets. */
export interface AppVariables {
  requestId: string;
  principal: Principal;
  sourceAddress: string;
  /** The access and audit records of this request for a given status (set by the guard). */
  auditRecords: (status: number) => DomainEvent[];
  /** What a hunt asked and answered, added to its request's audit record (`POST /api/v1/search`). */
  auditSearch: ApiRequestAudited['search'];
  /** Set once a handler committed the audit records with its command. */
  audited: boolean;
  /** The queue share of an admitted ingest request. */
  ingestTicket: IngestTicket;
  /** When (epoch ms) the body of an admitted ingest request must have arrived (readBodyBytes answers 408 past it). */
  bodyDeadline: number;
}

/** Hono environment of the instance app. */
export interface AppEnv {
  Variables: AppVariables;
  /**
   * `forwarded`: a request a JetStream follower forwarded to this leader (src/cli/cluster): it never gets a loopback or
   * mesh identity.
   */
  Bindings: { incoming?: unknown; forwarded?: boolean };
}

/** Precomputed address sets of the config. */
export interface NetPolicy {
  readonly approved: CidrSet;
  readonly trustedProxies: CidrSet;
}
