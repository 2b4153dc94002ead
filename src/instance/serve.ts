import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { openCredentialRegistry } from '../auth/registry.js';
import { ensureSecretDir, secretFileProblem } from '../auth/secret-files.js';
import type { Config } from '../config/schema.js';
import { createApp } from '../http/app.js';
import { installBuiltinRules } from './builtin-rules.js';
import { importEnrollmentGrants } from './enrollment-grants.js';
import { openInstanceStore, storeOptions, type InstanceStore } from './open.js';
import { loadIdentityKey, startDeploymentReporter } from './deployment-reporter.js';
import { listen } from '../http/listen.js';
import { createIngestAdmission } from '../http/admission.js';
import { createRefusalLedger } from '../http/refusals.js';
import { startRefusalSummaries } from './refusal-summaries.js';
import { readYourWritesOf } from '../http/read-consistency.js';
import { detectionSettingsOf } from '../alerting/detection-step.js';
import { openMeshIdentity } from './mesh-identity.js';
import { startInstanceCheckpointer } from './checkpoints.js';
import { startExports } from '../export/start.js';

/** A running instance: its URL and how to stop it. */
export interface RunningInstance {
  readonly url: string;
  readonly instance: InstanceStore;
  /** Stops accepting, lets in-flight requests finish, then checkpoints and closes the store. */
  stop(): Promise<void>;
}

/** Refuses a credentials file or folder that group or others can reach. */
export function checkCredentialsFile(path: string): void {
  ensureSecretDir(path);
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
}

/** Starts `vigil serve`: opens the store, checks secrets, listens. */
export async function startInstance(config: Config, log: (line: Record<string, unknown>) => void, onFatal: (err: Error) => void): Promise<RunningInstance> {
  checkCredentialsFile(config.auth.credentialsFile);
  const mesh = config.auth.mesh ? openMeshIdentity(config.auth.mesh, log) : undefined;
  const identityKey = config.deployment ? loadIdentityKey(config.deployment.identityKeyFile) : undefined;
  const instance = await openInstanceStore(config.storage.path, { ...storeOptions(config), onFatal });
  const transparency = await startInstanceCheckpointer(instance, config).catch(async (err: unknown) => {
    await instance.close();
    throw err;
  });
  const pack = await installBuiltinRules(instance.writer, new Date().toISOString());
  if (pack.installed) log({ level: 'info', msg: 'built-in rule pack installed', version: pack.version, rules: pack.rules });
  const grantsFile = config.deployment?.enrollmentGrantsFile;
  if (grantsFile) {
    const imported = await importEnrollmentGrants(instance.writer, grantsFile, new Date().toISOString()).catch(async (err: unknown) => {
      await instance.close();
      throw err;
    });
    if (imported > 0) log({ level: 'info', msg: 'enrollment grants imported', grants: imported });
  }
  const exports = await startExports(config.export, {
    storePath: config.storage.path, origin: transparency.verifier.name, log: instance.log, writer: instance.writer,
    detection: detectionSettingsOf(config), logLine: log,
  }).catch(async (err: unknown) => {
    await transparency.stop();
    await instance.close();
    throw err;
  });
  const registry = openCredentialRegistry(config.auth.credentialsFile, (message) => log({ level: 'error', msg: message }));
  const refusals = createRefusalLedger(config.limits);
  const summaries = startRefusalSummaries(refusals, instance.writer, config.limits.refusalSummarySeconds, () => new Date(), detectionSettingsOf(config));
  const app = createApp({
    writer: instance.writer,
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
    readYourWrites: readYourWritesOf(() => instance.readYourWrites()),
    transparency,
    exports: () => exports.status(),
  });
  const server = await listen(app.fetch, config.server.host, config.server.port);
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  const { port } = server.address() as AddressInfo;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const dep = config.deployment;
  const reporter = dep && identityKey ? startDeploymentReporter({ authorityUrl: dep.authorityUrl, deploymentId: dep.deploymentId, key: identityKey, intervalMs: dep.intervalSeconds * 1000, instanceUrl: dep.instanceUrl ?? `http://${host}:${port}`, ...(dep.centralVmId ? { centralVmId: dep.centralVmId } : {}), log: instance.log, now: () => new Date(), onLine: log }) : undefined;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    instance,
    stop() {
      stopping ??= (async () => {
        await reporter?.stop();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 10_000).unref();
        });
        await summaries.stop();
        await exports.stop();
        await transparency.stop();
        await instance.close();
      })();
      return stopping;
    },
  };
}
