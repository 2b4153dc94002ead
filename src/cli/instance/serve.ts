import { createFeedRunner } from '../../services/intel/feed-runner.js';
import { createSearcher } from '../../services/hunt/searches.js';
import { createRetroSearches } from '../../services/intel/retro-search.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { KeyObject } from 'node:crypto';
import { ensureSecretDir, secretFileProblem } from '../../kernel/secret-files.js';
import type { Config } from '../../services/config-schema.js';
import type { InstanceStore } from './open.js';
import {
  loadIdentityKey,
  readGrantsSeen,
  startDeploymentReporter,
  type DeploymentReporter,
} from '../../services/deployment-reporter.js';
import { listen, type ConnectionLimits } from '../../http/listen.js';
import { cidrSet } from '../../kernel/cidr.js';
import type { Metrics } from '../../services/metrics/metrics.js';
import { createRefusalLedger, type RefusalLedger } from '../../http/refusals.js';
import { startRefusalSummaries, type RefusalSummaries } from './refusal-summaries.js';
import { detectionSettingsOf, instanceDetector, type Detector } from '../../commands/alerting/detection-step.js';
import { createRuleCosts } from '../../commands/alerting/rule-costs.js';
import { createRuleRunner } from '../../commands/alerting/rule-runner.js';
import { openMeshIdentity } from './mesh-identity.js';
import { createPipeline, type Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import { startSyslogListeners, type SyslogListeners } from '../../services/listeners/syslog-listeners.js';
import { createSelfMonitor, statfsSpace, type SelfMonitor } from '../../services/monitoring/self-monitor.js';
import { fatalDrain, trackInFlight, type InFlight } from './fatal-drain.js';
import { exitAfterReadSideHalt } from './fatal-exit.js';
import { listenFailure, type ListenOrigin } from './startup-error.js';
import type { JetStreamNode } from './jetstream-node.js';
import type { ClusterEdge } from '../cluster/cluster-edge.js';
import type { StopList } from './stop-list.js';
import type { Exports } from '../../services/export/start.js';
import { openServedStore, type JetStreamModule, type ServedStore } from './served-store.js';
import { startupWritesOf, type WiredWork } from './startup-writes.js';
import { startInstanceExports } from './instance-exports.js';
import { startInstanceRetention } from './instance-retention.js';
import { watchCredentials, type CredentialsWatch } from './credentials-watch.js';
import { createInstanceApp, type InstanceApp } from './instance-app.js';
import { startInstanceWitnessPush } from './instance-witnesses.js';

/** A running instance: its URL and how to stop it. */
export interface RunningInstance {
  readonly url: string;
  readonly instance: InstanceStore;
  /** Applies a reloaded configuration's `monitoring` section (watermarks, cadences, quiet hours). */
  reload(config: Config): void;
  /** Stops accepting, lets in-flight requests finish, then checkpoints and closes the store. */
  stop(): Promise<void>;
}

/** Refuses a credentials file or folder that group or others can reach. */
export function checkCredentialsFile(path: string): void {
  ensureSecretDir(path);
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
}

/** Parts that closures made before them reach (the fatal path, the app, refusal summaries), set as each starts. */
interface Late {
  server?: Server;
  inFlight?: InFlight;
  haltReadSide?: () => Promise<boolean>;
  edge?: ClusterEdge;
  /** Bound once the server listens (the reporter needs the port); the console reads it through `deployment`. */
  reporter?: DeploymentReporter;
}

/** Starts `vigil serve`: opens the store, checks secrets, listens. */
export async function startInstance(
  config: Config,
  log: (line: Record<string, unknown>) => void,
  onFatal: (err: Error) => void,
  origin: ListenOrigin = { host: 'server.host', port: 'server.port' },
): Promise<RunningInstance> {
  checkCredentialsFile(config.auth.credentialsFile);
  const mesh = config.auth.mesh ? openMeshIdentity(config.auth.mesh, log) : undefined;
  const identityKey = config.deployment ? loadIdentityKey(config.deployment.identityKeyFile) : undefined;
  const late: Late = {};
  const halt = exitAfterReadSideHalt(() => late.haltReadSide, log, onFatal);
  const fatal = fatalDrain(
    () => late.server,
    () => late.inFlight,
    log,
    halt,
  );
  const ruleCosts = createRuleCosts();
  const detector = instanceDetector(
    detectionSettingsOf(config),
    createRuleRunner(config.detection.ruleBudget, ruleCosts),
  );
  const served = await openServedStore(config, fatal, late, log, detector);
  const { cluster, jetstream, instance, parts } = served;
  const onLeader = leaderPipeline(served, detector);
  const { exports, credentials } = await startWriting(served, config, onLeader, log);
  const witnesses = startInstanceWitnessPush(config, served, onLeader, log);
  parts.push(() => witnesses.stop());
  const intelRetro = createRetroSearches({
    reads: instance.reads,
    readYourWrites: () => instance.readYourWrites(),
    pipeline: onLeader,
    bounds: {
      days: config.intel.retroDays,
      maxEvents: config.intel.retroMaxEvents,
      maxMs: config.intel.retroSeconds * 1000,
    },
    now: () => new Date(),
    log,
  });
  parts.push(() => intelRetro.stop());
  const intelFeeds = createFeedRunner({
    feeds: config.intel.feeds,
    pipeline: onLeader,
    now: () => new Date(),
    log,
    ...(jetstream ? { leads: () => jetstream.leadership().leading } : {}),
    ...(config.intel.retroDays > 0 ? { added: (f, v, i) => void intelRetro.search(f, v, i) } : {}),
  });
  intelFeeds.start();
  parts.push(() => intelFeeds.stop());
  const search = createSearcher({ storePath: config.storage.path, nice: config.limits.readSideNice });
  parts.push(() => search.stop());
  const refusals = createRefusalLedger(config.limits);
  const monitor = selfMonitorOf(config, onLeader, instance, log);
  const summaries = startServedSummaries(refusals, instance.pipeline, config, jetstream ? late : undefined);
  parts.push(() => summaries.stop());
  const http = createInstanceApp(served, config, {
    detector,
    ruleCosts,
    registry: credentials.registry,
    mesh,
    refusals,
    exports,
    monitor,
    witnesses,
    intelFeeds,
    ...(config.intel.retroDays > 0 ? { intelRetro } : {}),
    search,
    late,
    log,
  });
  const { app, edge } = http;
  late.edge = edge;
  // A start that fails from here on stops what has started, then the node's connection, as every other failure point.
  const abandon = async () => {
    credentials.stop();
    await parts.stopAll();
    await jetstream?.close();
  };
  const server = await listen(
    edge ? edge.fetch : app.fetch,
    config.server.host,
    config.server.port,
    connectionLimitsOf(config, http.metrics),
  ).catch(async (err: NodeJS.ErrnoException) => {
    await abandon();
    throw listenFailure(err, config.server.host, config.server.port, origin) ?? err;
  });
  late.server = server;
  late.inFlight = trackInFlight(server);
  const syslog = await startServedSyslog(config, http, cluster, monitor, log).catch(async (err: unknown) => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await abandon();
    throw err;
  });
  const stopNudging = instance.log.follow(instance.log.head().seq, (r) => monitor.noteRecord(r));
  monitor.start();
  server.keepAliveTimeout = 5_000;
  const url = urlOf(server, config.server.host);
  late.reporter = startReporter(config.deployment, identityKey, url, instance, log);
  let stopping: Promise<void> | undefined;
  return {
    url,
    instance,
    reload(next) {
      monitor.reload(next.monitoring);
      log({ level: 'info', msg: 'monitoring settings reloaded', disk: next.monitoring.disk });
    },
    stop() {
      const { reporter } = late;
      stopping ??= stopServing({ jetstream, credentials, reporter, syslog, stopNudging, monitor, server, parts });
      return stopping;
    },
  };
}

/** The pipeline of writes only the leader makes on a JetStream node (on a single node, the instance's pipeline). */
function leaderPipeline(
  served: Pick<ServedStore, 'instance' | 'jetstream' | 'cluster'>,
  detector: Detector<WriteModels>,
): Pipeline<WriteModels> {
  const { instance, jetstream } = served;
  // Time-driven and policy writes are the leader's on a JetStream node: a follower's would only be refused.
  return jetstream
    ? createPipeline(
        served.cluster!.leaderOnly(instance.writer, () => jetstream.leadership().leading),
        detector,
      )
    : instance.pipeline;
}

/**
 * Starts what the writer does on its own: the start-up writes, export, retention (these two add their stops to
 * `served.parts`), and recording the credentials file's changes.
 */
async function startWriting(
  served: ServedStore,
  config: Config,
  onLeader: Pipeline<WriteModels>,
  log: (line: Record<string, unknown>) => void,
): Promise<{ exports: Exports; credentials: CredentialsWatch }> {
  const { instance, transparency, jetstream, parts, failed } = served;
  const wired: WiredWork = { credentials: () => {}, retentionPolicy: async () => {} };
  const startupWrites = startupWritesOf(instance.pipeline, config.deployment?.enrollmentGrantsFile, wired, log);
  const origin = transparency.verifier.name;
  const exports = await startInstanceExports(config, origin, instance, jetstream, startupWrites, log).catch(failed);
  parts.push(() => exports.stop());
  const retention = await startInstanceRetention(config, instance, onLeader, transparency, jetstream, exports, log);
  parts.push(() => retention.stop());
  wired.retentionPolicy = () => retention.recordPolicy();
  const credentials = watchCredentials(config.auth.credentialsFile, instance.pipeline, jetstream, log);
  wired.credentials = credentials.recordChanges;
  return { exports, credentials };
}

/** The self-monitor of a serving instance: the disk under its store, silent sources, the read side's progress. */
function selfMonitorOf(
  config: Config,
  onLeader: Pipeline<WriteModels>,
  instance: InstanceStore,
  log: (line: Record<string, unknown>) => void,
): SelfMonitor & { start(): void } {
  return createSelfMonitor({
    // Time-driven checks are the leader's: a follower's would only be refused.
    pipeline: onLeader,
    settings: config.monitoring,
    space: statfsSpace(config.storage.path),
    now: () => new Date(),
    log,
    progress: () => ({ headSeq: instance.log.head().seq, readSeq: instance.readSide.applied() }),
    exceptionReminderMs: config.detection.exceptionReminderHours * 3_600_000,
  });
}

/**
 * Starts writing the summaries of refused requests; on a JetStream node (`late` given) through its cluster edge once
 * there is one, as a request's access records go.
 */
function startServedSummaries(
  refusals: RefusalLedger,
  pipeline: Pipeline<WriteModels>,
  config: Config,
  late: Pick<Late, 'edge'> | undefined,
): RefusalSummaries {
  return startRefusalSummaries(
    refusals,
    pipeline,
    config.limits.refusalSummarySeconds,
    () => new Date(),
    late ? (facts, ctx, local) => (late.edge ? late.edge.recordAccess(facts, ctx, local) : local()) : undefined,
  );
}

/** Starts the configured syslog listeners, writing as the app does (a JetStream follower's through the leader). */
function startServedSyslog(
  config: Config,
  http: InstanceApp,
  cluster: Pick<JetStreamModule, 'syslogClusterOf'> | undefined,
  monitor: Pick<SelfMonitor, 'refusesWrites'>,
  log: (line: Record<string, unknown>) => void,
): Promise<SyslogListeners> {
  const { edge } = http;
  return startSyslogListeners(config.syslog.listeners, {
    pipeline: http.pipeline,
    metrics: http.metrics,
    log,
    now: () => new Date(),
    refusesWrites: () => monitor.refusesWrites(),
    ...(edge ? { cluster: cluster!.syslogClusterOf(edge, config) } : {}),
  });
}

/** The URL a listening server answers on, its host as configured. */
function urlOf(server: Server, configuredHost: string): string {
  const { port } = server.address() as AddressInfo;
  const host = configuredHost.includes(':') ? `[${configuredHost}]` : configuredHost;
  return `http://${host}:${port}`;
}

/** Starts reporting this deployment to the setup authority, when one is configured (its key loaded at start). */
function startReporter(
  dep: Config['deployment'],
  identityKey: KeyObject | undefined,
  url: string,
  instance: InstanceStore,
  log: (line: Record<string, unknown>) => void,
): DeploymentReporter | undefined {
  return dep && identityKey
    ? startDeploymentReporter({
        authorityUrl: dep.authorityUrl,
        deploymentId: dep.deploymentId,
        key: identityKey,
        intervalMs: dep.intervalSeconds * 1000,
        instanceUrl: dep.instanceUrl ?? url,
        ...(dep.centralVmId ? { centralVmId: dep.centralVmId } : {}),
        log: instance.log,
        collectors: () => instance.reads,
        ...(dep.enrollmentGrantsFile ? { grants: readGrantsSeen(dep.enrollmentGrantsFile) } : {}),
        now: () => new Date(),
        onLine: log,
      })
    : undefined;
}

/** What stopping a serving instance stops. */
interface Serving {
  readonly jetstream: JetStreamNode | undefined;
  readonly credentials: CredentialsWatch;
  readonly reporter: DeploymentReporter | undefined;
  readonly syslog: SyslogListeners;
  readonly stopNudging: () => void;
  readonly monitor: SelfMonitor;
  readonly server: Server;
  readonly parts: StopList;
}

/**
 * Stops a serving instance: the node stops answering forwarded requests, intake stops, the requests in flight are
 * answered, then the parts stop (the store last of them), then the node's connection.
 */
async function stopServing(s: Serving): Promise<void> {
  await s.jetstream?.quiesce();
  s.credentials.stop();
  await s.reporter?.stop();
  await s.syslog.stop();
  s.stopNudging();
  await s.monitor.stop();
  await new Promise<void>((resolve) => {
    s.server.close(() => resolve());
    s.server.closeIdleConnections();
    setTimeout(() => s.server.closeAllConnections(), 10_000).unref();
  });
  await s.parts.stopAll();
  await s.jetstream?.close();
}

/**
 * The connection limits of the instance's server from `limits` (the same on every route); a trusted proxy,
 * through which many clients arrive, has no per-address cap. Each connection cut or refused is counted in /metrics.
 */
function connectionLimitsOf(config: Config, metrics: Metrics): ConnectionLimits {
  const proxies = cidrSet(config.server.trustedProxies);
  return {
    headerSeconds: config.limits.headerSeconds,
    requestSeconds: config.limits.requestSeconds,
    connectionsPerAddress: config.limits.connectionsPerAddress,
    exempt: (address) => proxies.has(address),
    onRefused: (reason) => metrics.httpConnectionsRefused.inc({ reason }),
  };
}
