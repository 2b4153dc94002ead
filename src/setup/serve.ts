import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { ensureSecretDir, secretFileProblem } from '../kernel/secret-files.js';
import { openAccountRegistry } from './accounts.js';
import { createAuthorityApp } from './app.js';
import type { AuthorityConfig } from './config.js';
import { createSmtpMailer, type Mailer } from './mailer.js';
import { openAuthorityStore, type AuthorityStore } from './open.js';
import { loadRecoveryKey } from './recovery-crypto.js';
import { createRecoveryMonitor, type RecoveryMonitor } from './recovery-monitor.js';
import { DEFAULT_CONNECTION_LIMITS, listen } from '../http/listen.js';

/** A running setup authority. */
export interface RunningAuthority {
  readonly url: string;
  readonly store: AuthorityStore;
  readonly monitor: RecoveryMonitor;
  stop(): Promise<void>;
}

function checkSecret(path: string): void {
  ensureSecretDir(path);
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
}

function mailerOf(config: AuthorityConfig): Mailer | undefined {
  if (!config.email) return undefined;
  const file = config.email.smtp.passwordFile;
  if (file !== undefined) checkSecret(file);
  return createSmtpMailer(config.email, file === undefined ? undefined : readFileSync(file, 'utf8').trim());
}

/** Starts `vigil setup-authority serve`: checks secrets, opens its own store, listens, runs the recovery monitor. */
export async function startAuthority(
  config: AuthorityConfig,
  log: (line: Record<string, unknown>) => void,
  onFatal: (err: Error) => void,
  now: () => Date = () => new Date(),
): Promise<RunningAuthority> {
  checkSecret(config.accounts.file);
  const recoveryKey = loadRecoveryKey(config.recovery.keyFile);
  const mailer = mailerOf(config);
  const store = await openAuthorityStore(config.storage.path, onFatal);
  const accounts = openAccountRegistry(config.accounts.file, (message) => log({ level: 'error', msg: message }));
  let publicUrl = config.server.publicUrl?.replace(/\/+$/, '') ?? '';
  const app = createAuthorityApp({
    pipeline: store.pipeline,
    accounts,
    config,
    recoveryKey,
    now,
    publicUrl: () => publicUrl,
    log,
  });
  // The authority's own, longer bounds (people on slow links sign in and reveal tokens here).
  const limits = { ...DEFAULT_CONNECTION_LIMITS, headerSeconds: 30, requestSeconds: 60 };
  const server = await listen(app.fetch, config.server.host, config.server.port, limits);
  const { port } = server.address() as AddressInfo;
  const host = config.server.host.includes(':') ? `[${config.server.host}]` : config.server.host;
  const url = `http://${host}:${port}`;
  publicUrl ||= url;
  const monitor = createRecoveryMonitor({
    pipeline: store.pipeline,
    now,
    timeoutSeconds: config.recovery.heartbeatTimeoutSeconds,
    key: recoveryKey,
    accounts,
    ...(mailer ? { mailer } : {}),
    publicUrl: () => publicUrl,
    log,
  });
  monitor.start(config.recovery.checkIntervalSeconds * 1000);
  let stopping: Promise<void> | undefined;
  return {
    url,
    store,
    monitor,
    stop() {
      stopping ??= (async () => {
        await monitor.stop();
        mailer?.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          setTimeout(() => server.closeAllConnections(), 5_000).unref();
        });
        await store.close();
      })();
      return stopping;
    },
  };
}
