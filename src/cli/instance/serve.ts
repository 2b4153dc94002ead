import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { openCredentialRegistry, type Credential } from '../../auth/registry.js';
import { ensureSecretDir, secretFileProblem } from '../../kernel/secret-files.js';
import type { Config } from '../../services/config-schema.js';
import { createApp } from '../../http/app.js';
import { installBuiltinRules } from './builtin-rules.js';
import { importEnrollmentGrants } from '../../services/enrollment-grants.js';
import { openInstanceStore, storeOptions, type InstanceStore } from './open.js';
import {
  loadIdentityKey,
  startDeploymentReporter,
  type DeploymentReporter,
} from '../../services/deployment-reporter.js';
import { listen } from '../../http/listen.js';
import { createIngestAdmission } from '../../http/admission.js';
import { createRefusalLedger } from '../../http/refusals.js';
import { startRefusalSummaries } from './refusal-summaries.js';
import { readYourWritesOf } from '../../http/read-consistency.js';
import { detectionSettingsOf, instanceDetector } from '../../commands/alerting/detection-step.js';
import { openMeshIdentity } from './mesh-identity.js';
import { startInstanceCheckpointer } from './checkpoints.js';
import { exportsWhileLeading, startExports, type ExportDeps, type LeaderExports } from '../../services/export/start.js';
import { logCursor } from '../../services/export/cursor.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { createMetrics } from '../../services/metrics/metrics.js';
import { measuredWriter } from '../../services/metrics/writer-metrics.js';
import { createPipeline } from '../../commands/pipeline.js';
import { startSyslogListeners } from '../../services/listeners/syslog-listeners.js';
import { createSelfMonitor, statfsSpace } from '../../services/monitoring/self-monitor.js';
import { fatalDrain, trackInFlight, type InFlight } from './fatal-drain.js';
import { recordCredentialChanges } from './credential-recorder.js';
import { listenFailure, type ListenOrigin } from './startup-error.js';
import type { JetStreamNode } from './jetstream-node.js';
import type { ClusterEdge } from '../cluster/cluster-edge.js';
import { startRetention } from '../../services/retention/scheduler.js';
import { archiveDirOf } from '../../services/retention/expire.js';
import { followCut } from '../../services/retention/follow-cut.js';

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

/** The size of a file in bytes, or 0 when it cannot be read. */
function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** How long the exit after a storage failure waits for the read side's worker to stop between two folds. */
const READ_SIDE_HALT_MS = 2000;

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
  let server: Server | undefined;
  let inFlight: InFlight | undefined;
  // A storage failure ends the process without closing the store: the read side's worker is first
  // stopped between two transactions, as the exit ending it inside one hangs in lmdb-js's clean-up.
  // A worker that does not stop in time is not waited for: the process is killed instead (exit
  // status 137, not 70) rather than left hanging, answering nothing, with its port closed.
  let haltReadSide: (() => Promise<boolean>) | undefined;
  const fatal = fatalDrain(
    () => server,
    () => inFlight,
    log,
    (err) => {
      void (haltReadSide?.() ?? Promise.resolve(true)).then((halted) => {
        if (!halted) {
          log({
            level: 'fatal',
            msg:
              `the read side did not stop within ${READ_SIDE_HALT_MS} ms: killing the process, whose exit would ` +
              `wait for it forever`,
            error: err.message,
          });
          process.kill(process.pid, 'SIGKILL');
        }
        onFatal(err);
      });
    },
  );
  // On a JetStream node a start-up step the stream does not answer is said as a refusal with what to do.
  // The NATS client modules load only for a JetStream backend: the default single-node path never loads them.
  const cluster = config.storage.backend === 'jetstream' ? await import('./jetstream-node.js') : undefined;
  const refusal = (err: unknown) =>
    cluster && err instanceof Error ? cluster.unanswered(config.storage.jetstream?.stream ?? '(unnamed)', err) : err;
  const jetstream = cluster
    ? await cluster.connectJetStreamNode(config, log).catch((err: unknown) => {
        throw refusal(err);
      })
    : undefined;
  // Only a serving instance lowers its read side: there it shares the CPU with ingest, and the
  // writer, which acknowledges evidence, goes first (one-shot commands such as replay wait for both).
  const opened = {
    ...storeOptions(config),
    readSideNice: config.limits.readSideNice,
    onFatal: fatal,
    ...(jetstream ? { openLog: jetstream.openLog } : {}),
    onReadSideFailure: (message: string) =>
      log({
        level: 'error',
        msg: 'the read side failed: reads are answered 503 until vigil serve is restarted',
        error: message,
      }),
  };
  const instance = await openInstanceStore(config.storage.path, opened).catch(async (err: unknown) => {
    await jetstream?.close();
    throw refusal(err);
  });
  haltReadSide = () => instance.readSide.halt(READ_SIDE_HALT_MS);
  const transparency = await startInstanceCheckpointer(instance, config).catch(async (err: unknown) => {
    await instance.close();
    await jetstream?.close();
    throw refusal(err);
  });
  const detector = instanceDetector(detectionSettingsOf(config));
  // Time-driven and policy writes are the leader's on a JetStream node: a follower's would only be refused.
  const onLeader = jetstream
    ? createPipeline(
        cluster!.leaderOnly(instance.writer, () => jetstream.leadership().leading),
        detector,
      )
    : instance.pipeline;
  // Work for the writer once the service is wired (credential changes, the retention policy); it runs again whenever a
  // JetStream node starts leading.
  let whenLeading: () => void = () => {};
  let recordRetentionPolicy: () => Promise<void> = async () => {};
  // What the writer does at start; on a JetStream node, each time the node starts leading.
  const startupWrites = async () => {
    whenLeading();
    await recordRetentionPolicy();
    const pack = await installBuiltinRules(instance.pipeline, new Date().toISOString());
    if (pack.installed)
      log({ level: 'info', msg: 'built-in rule pack installed', version: pack.version, rules: pack.rules });
    const grantsFile = config.deployment?.enrollmentGrantsFile;
    if (grantsFile) {
      const imported = await importEnrollmentGrants(instance.pipeline, grantsFile, new Date().toISOString(), log);
      if (imported > 0) log({ level: 'info', msg: 'enrollment grants imported', grants: imported });
    }
  };
  const exportDeps: ExportDeps = {
    storePath: config.storage.path,
    origin: transparency.verifier.name,
    log: instance.log,
    pipeline: instance.pipeline,
    logLine: log,
  };
  // On a JetStream node export runs on the leader only, from the cursors the log records; items are
  // named by the stream (the same on every node), so a receiver deduplicates a batch sent again. The
  // stream's creation time tells apart two deployments that use the same stream name (the default
  // VIGIL_LOG) and a stream recreated under its old name, whose sequences start again at 1.
  let leaderExports: LeaderExports | undefined;
  const startNode = async (node: JetStreamNode) => {
    const streamId = createHash('sha256').update(node.streamCreated).digest('hex').slice(0, 32);
    leaderExports = exportsWhileLeading(config.export, {
      ...exportDeps,
      origin: `vigil.stream/${node.conn.stream}/${streamId}`,
      cursorOf: (name) => logCursor(instance.pipeline, name, Date.now, log),
    });
    const exportsOnLeader = leaderExports;
    await node.start(
      instance.runtime,
      async () => {
        await startupWrites();
        await exportsOnLeader.lead();
      },
      () => exportsOnLeader.follow(),
      followCut(instance.runtime, instance.log),
    );
  };
  await (jetstream ? startNode(jetstream) : startupWrites()).catch(async (err: unknown) => {
    await leaderExports?.stop();
    await transparency.stop();
    await instance.close();
    await jetstream?.close();
    throw refusal(err);
  });
  const exports =
    leaderExports ??
    (await startExports(config.export, exportDeps).catch(async (err: unknown) => {
      await transparency.stop();
      await instance.close();
      throw err;
    }));
  // Expiry waits for every export destination: a record leaves the live store only once delivered.
  const retention = await startRetention(
    {
      // On a JetStream node only the leader records the policy in force and expires segments (archiving
      // them on its machine); it completes a purge its predecessor left undone before each run.
      log: instance.log,
      pipeline: onLeader,
      carried: instance.carried,
      checkpoints: transparency,
      origin: transparency.verifier.name,
      ...(jetstream
        ? {
            node: jetstream.name,
            leads: () => jetstream.leadership().leading,
            beforeRun: async () => {
              await jetstream.log()?.purgeBelowCut();
            },
          }
        : {}),
      settings: config.retention,
      archiveDir: archiveDirOf(config.retention, config.storage.path),
      storePath: config.storage.path,
      delivered: () => Math.min(Infinity, ...exports.status().map((d) => d.cursor)),
    },
    () => new Date(),
    log,
  );
  recordRetentionPolicy = () => retention.recordPolicy();
  // The CLI writes the credentials file; the service records what changed in it when it loads it,
  // so the log keeps one writer. The file is checked every second even when no request comes.
  // On a JetStream node only the leader records them, again each time a node starts leading.
  let loadedCredentials: readonly Credential[] | undefined;
  const recordCredentials = () => {
    if (!loadedCredentials || (jetstream && !jetstream.leadership().leading)) return;
    recordCredentialChanges(instance.pipeline, loadedCredentials, new Date().toISOString()).then(
      (changes) => {
        if (changes > 0) log({ level: 'info', msg: 'credential registry changes recorded', changes });
      },
      (err: unknown) =>
        log({ level: 'error', msg: 'credential registry changes not recorded', error: (err as Error).message }),
    );
  };
  const onLoaded = (credentials: readonly Credential[]) => {
    loadedCredentials = credentials;
    recordCredentials();
  };
  whenLeading = recordCredentials;
  const registry = openCredentialRegistry(
    config.auth.credentialsFile,
    (message) => log({ level: 'error', msg: message }),
    500,
    onLoaded,
  );
  registry.size();
  const registryPoll = setInterval(() => registry.size(), 1000);
  registryPoll.unref();
  const refusals = createRefusalLedger(config.limits);
  const monitor = createSelfMonitor({
    // Time-driven checks are the leader's: a follower's would only be refused.
    pipeline: onLeader,
    settings: config.monitoring,
    space: statfsSpace(config.storage.path),
    now: () => new Date(),
    log,
    progress: () => ({ headSeq: instance.log.head().seq, readSeq: instance.readSide.applied() }),
  });
  let edge: ClusterEdge | undefined;
  const summaries = startRefusalSummaries(
    refusals,
    instance.pipeline,
    config.limits.refusalSummarySeconds,
    () => new Date(),
    jetstream ? (facts, ctx, local) => (edge ? edge.recordAccess(facts, ctx, local) : local()) : undefined,
  );
  // Bound once the server listens (the reporter needs the port); the console reads it through `deployment`.
  let reporter: DeploymentReporter | undefined;
  const metrics = createMetrics();
  const dataFile = join(config.storage.path, 'data.mdb');
  metrics.observe({ logHead: () => ({ seq: instance.log.head().seq, bytes: fileSize(dataFile) }) });
  // The edge's writes are measured (batch sizes, commit latency); the writer itself stays unaware.
  const pipeline = createPipeline(measuredWriter(instance.writer, metrics), detector);
  const app = createApp({
    metrics,
    pipeline,
    registry,
    config,
    now: () => new Date(),
    peerOf: (incoming) => (incoming as { socket?: { remoteAddress?: string } } | undefined)?.socket?.remoteAddress,
    peerPortOf: (incoming) => (incoming as { socket?: { remotePort?: number } } | undefined)?.socket?.remotePort,
    ...(mesh ? { mesh } : {}),
    log,
    refusals,
    admission: createIngestAdmission(config.limits),
    reads: instance.reads,
    graph: (q) => instance.readSide.graph(q),
    readYourWrites: readYourWritesOf(
      jetstream ? () => jetstream.readYourWrites(() => instance.readYourWrites()) : () => instance.readYourWrites(),
    ),
    transparency,
    deployment: () => reporter?.status(),
    exports: () => exports.status(),
    monitor,
    ...(jetstream ? { recordAccess: (facts, ctx, local) => edge!.recordAccess(facts, ctx, local) } : {}),
  });
  edge = jetstream
    ? cluster!.clusterEdgeOf(
        jetstream,
        instance,
        (req, env) => app.fetch(req, env as { incoming?: unknown; forwarded?: boolean }),
        pipeline,
        config,
      )
    : undefined;
  server = await listen(edge ? edge.fetch : app.fetch, config.server.host, config.server.port).catch(
    async (err: NodeJS.ErrnoException) => {
      clearInterval(registryPoll);
      await summaries.stop();
      await retention.stop();
      await exports.stop();
      await transparency.stop();
      await instance.close();
      throw listenFailure(err, config.server.host, config.server.port, origin) ?? err;
    },
  );
  const listening = server;
  inFlight = trackInFlight(server);
  const syslog = await startSyslogListeners(config.syslog.listeners, {
    pipeline,
    metrics,
    log,
    now: () => new Date(),
    refusesWrites: () => monitor.refusesWrites(),
    ...(edge ? { cluster: cluster!.syslogClusterOf(edge, config) } : {}),
  }).catch(async (err: unknown) => {
    clearInterval(registryPoll);
    await new Promise<void>((resolve) => listening.close(() => resolve()));
    await summaries.stop();
    await retention.stop();
    await exports.stop();
    await transparency.stop();
    await instance.close();
    throw err;
  });
  const stopNudging = instance.log.follow(instance.log.head().seq, (r) => monitor.noteRecord(r));
  monitor.start();
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  const { port } = server.address() as AddressInfo;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const dep = config.deployment;
  reporter =
    dep && identityKey
      ? startDeploymentReporter({
          authorityUrl: dep.authorityUrl,
          deploymentId: dep.deploymentId,
          key: identityKey,
          intervalMs: dep.intervalSeconds * 1000,
          instanceUrl: dep.instanceUrl ?? `http://${host}:${port}`,
          ...(dep.centralVmId ? { centralVmId: dep.centralVmId } : {}),
          log: instance.log,
          now: () => new Date(),
          onLine: log,
        })
      : undefined;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    instance,
    reload(next) {
      monitor.reload(next.monitoring);
      log({ level: 'info', msg: 'monitoring settings reloaded', disk: next.monitoring.disk });
    },
    stop() {
      stopping ??= (async () => {
        await jetstream?.quiesce();
        clearInterval(registryPoll);
        await reporter?.stop();
        await syslog.stop();
        stopNudging();
        await monitor.stop();
        await new Promise<void>((resolve) => {
          server!.close(() => resolve());
          server!.closeIdleConnections();
          setTimeout(() => server!.closeAllConnections(), 10_000).unref();
        });
        await summaries.stop();
        await retention.stop();
        await exports.stop();
        await transparency.stop();
        await instance.close();
        await jetstream?.close();
      })();
      return stopping;
    },
  };
}
