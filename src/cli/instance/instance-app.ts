import type { Searcher } from '../../services/hunt/searches.js';
import type { Hono } from 'hono';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { MeshIdentity } from '../../auth/mesh-identity.js';
import type { CredentialRegistry } from '../../auth/registry.js';
import type { Detector } from '../../commands/alerting/detection-step.js';
import type { RuleCosts } from '../../commands/alerting/rule-costs.js';
import { createPipeline, type Pipeline } from '../../commands/pipeline.js';
import { createApp } from '../../http/app.js';
import { createIngestAdmission } from '../../http/admission.js';
import type { AppEnv } from '../../http/env.js';
import { readYourWritesOf } from '../../http/read-consistency.js';
import type { RefusalLedger } from '../../http/refusals.js';
import type { WriteModels } from '../../projections/models.js';
import type { Config } from '../../services/config-schema.js';
import type { DeploymentReporter } from '../../services/deployment-reporter.js';
import type { Exports } from '../../services/export/start.js';
import { createMetrics, type Metrics } from '../../services/metrics/metrics.js';
import { measuredWriter } from '../../services/metrics/writer-metrics.js';
import type { SelfMonitor } from '../../services/monitoring/self-monitor.js';
import type { WitnessPush } from '../../services/witness/witness-push.js';
import type { FeedRunner } from '../../services/intel/feed-runner.js';
import type { RetroSearches } from '../../services/intel/retro-search.js';
import type { ClusterEdge } from '../cluster/cluster-edge.js';
import { liveLogVerifier } from './live-verify.js';
import type { ServedStore } from './served-store.js';

/** What the app of a serving instance is built from, past its store and configuration. */
export interface InstanceAppParts {
  readonly detector: Detector<WriteModels>;
  /** What the detector counts of each rule's cost, for /metrics and the rule pages. */
  readonly ruleCosts: RuleCosts;
  readonly registry: CredentialRegistry;
  readonly mesh: MeshIdentity | undefined;
  readonly refusals: RefusalLedger;
  readonly exports: Exports;
  readonly monitor: SelfMonitor;
  /** The pushes of checkpoints to witnesses, and how fresh their cosignatures are. */
  readonly witnesses: WitnessPush;
  /** The threat intelligence feeds the service fetches. */
  readonly intelFeeds: FeedRunner;
  /** The searches of stored evidence for indicators feeds add (absent with `intel.retroDays` 0). */
  readonly intelRetro?: RetroSearches;
  /** The searches of stored evidence (`POST /api/v1/search`). */
  readonly search: Searcher;
  /** The deployment reporter, which starts once the server listens (it needs the port). */
  readonly late: { readonly reporter?: DeploymentReporter };
  readonly log: (line: Record<string, unknown>) => void;
}

/**
 * The HTTP side of a serving instance: its metrics, the pipeline its requests write through, the Hono app and, on a
 * JetStream node, the cluster edge in front of it.
 */
export interface InstanceApp {
  readonly metrics: Metrics;
  readonly pipeline: Pipeline<WriteModels>;
  readonly app: Hono<AppEnv>;
  readonly edge: ClusterEdge | undefined;
}

/** The size of a file in bytes, or 0 when it cannot be read. */
function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Builds the HTTP side of a serving instance over its store: metrics of the log and of the writes it makes, the app,
 * and on a JetStream node the cluster edge in front of it.
 */
export function createInstanceApp(
  served: Pick<ServedStore, 'instance' | 'transparency' | 'jetstream' | 'cluster'>,
  config: Config,
  p: InstanceAppParts,
): InstanceApp {
  const { instance, jetstream } = served;
  // Built over the app, and the app's access records go through it: bound once both exist.
  let edge: ClusterEdge | undefined;
  const metrics = createMetrics();
  const dataFile = join(config.storage.path, 'data.mdb');
  metrics.observe({
    logHead: () => ({ seq: instance.log.head().seq, bytes: fileSize(dataFile) }),
    witnessCosignatureAge: () => p.witnesses.health().ageSeconds ?? undefined,
  });
  // The edge's writes are measured (batch sizes, commit latency); the writer itself stays unaware.
  const pipeline = createPipeline(measuredWriter(instance.writer, metrics), p.detector);
  const app = createApp({
    metrics,
    pipeline,
    registry: p.registry,
    config,
    now: () => new Date(),
    peerOf: (incoming) => (incoming as { socket?: { remoteAddress?: string } } | undefined)?.socket?.remoteAddress,
    peerPortOf: (incoming) => (incoming as { socket?: { remotePort?: number } } | undefined)?.socket?.remotePort,
    ...(p.mesh ? { mesh: p.mesh } : {}),
    log: p.log,
    refusals: p.refusals,
    admission: createIngestAdmission(config.limits),
    reads: instance.reads,
    graph: (q) => instance.readSide.graph(q),
    readYourWrites: readYourWritesOf(
      jetstream ? () => jetstream.readYourWrites(() => instance.readYourWrites()) : () => instance.readYourWrites(),
    ),
    transparency: served.transparency,
    verifyLog: liveLogVerifier(config.storage.path, served.transparency.verifier),
    deployment: () => p.late.reporter?.status(),
    exports: () => p.exports.status(),
    monitor: p.monitor,
    witnesses: () => p.witnesses.health(),
    intelFeeds: p.intelFeeds,
    ...(p.intelRetro ? { intelRetro: p.intelRetro } : {}),
    search: p.search,
    ruleCosts: p.ruleCosts,
    ...(jetstream ? { recordAccess: (facts, ctx, local) => edge!.recordAccess(facts, ctx, local) } : {}),
  });
  edge = jetstream
    ? served.cluster!.clusterEdgeOf(
        jetstream,
        instance,
        (req, env) => app.fetch(req, env as { incoming?: unknown; forwarded?: boolean }),
        pipeline,
        config,
      )
    : undefined;
  return { metrics, pipeline, app, edge };
}
