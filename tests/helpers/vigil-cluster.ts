import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, writeTestConfig, type ServeProcess } from './cli.js';
import { tempDir } from './temp.js';

/** One `vigil serve` node of a JetStream cluster: its own directory and store, restartable. */
export interface VigilNode {
  readonly name: string;
  current(): ServeProcess | undefined;
  start(): Promise<ServeProcess>;
  /** Starts it, and again while a start fails (NATS unreachable at that moment), as systemd's Restart=always would. */
  startUntilUp(): Promise<ServeProcess>;
  /** SIGKILL (no lease release, nothing flushed) and wait. */
  kill(): Promise<void>;
  /** SIGTERM and wait; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Whether its output says it leads now (the last leadership line). */
  leads(): boolean;
  /** Why the last failed start failed (the end of its output), for diagnostics. */
  lastStartError(): string | undefined;
}

/** Nodes sharing one stream and one credentials file, and tokens to talk to them. */
export interface VigilCluster {
  readonly nodes: readonly VigilNode[];
  readonly ingestToken: string;
  readonly viewerToken: string;
  readonly root: string;
  stop(): Promise<void>;
}

/** Creates `count` nodes on the NATS `servers` (each with its own store dir), starting none of them. */
export function vigilCluster(servers: readonly string[], count: number, jetstream: Record<string, unknown> = {}, extra: Record<string, unknown> = {}): VigilCluster {
  const dir = tempDir('vigil-cluster-');
  const js = { servers: [...servers], stream: 'VIGIL_LOG', replicas: 1, leaseSeconds: 3, ...jetstream };
  // One log, one key: every node's signer holds the cluster's key (docs/scale-out.md, "Signed heads").
  const keyFile = join(dir.path, 'keys', 'log-signing.key');
  const made = runCli(['signer', 'key', '--out', keyFile]);
  if (made.status !== 0) throw new Error(made.stderr);
  const log = { ...(extra.log as Record<string, unknown> | undefined), signer: { keyFile } };
  const configs = Array.from({ length: count }, (_, i) => {
    const home = join(dir.path, `node${i}`);
    mkdirSync(home, { recursive: true });
    return { home, config: writeTestConfig(home, { ...extra, log, storage: { path: 'store', backend: 'jetstream', jetstream: { ...js, nodeName: `node${i}` } } }) };
  });
  const first = configs[0]!;
  const ingestToken = (JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', first.config]).stdout) as { token: string }).token;
  const viewerToken = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', first.config]).stdout) as { token: string }).token;
  // Every node reads the same credentials (an operator copies the file; the log records it once).
  for (const c of configs.slice(1)) {
    mkdirSync(join(c.home, 'secrets'), { recursive: true, mode: 0o700 });
    copyFileSync(join(first.home, 'secrets', 'credentials.json'), join(c.home, 'secrets', 'credentials.json'));
  }
  const nodes = configs.map((c, i): VigilNode => {
    let proc: ServeProcess | undefined;
    let startError: string | undefined;
    return {
      name: `node${i}`,
      current: () => proc,
      async start() {
        proc = await startServe(c.config, c.home);
        return proc;
      },
      async startUntilUp() {
        for (;;) {
          try {
            proc = await startServe(c.config, c.home);
            return proc;
          } catch (err) {
            startError = (err as Error).message.slice(-600);
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      },
      async kill() {
        if (proc && proc.proc.exitCode === null && proc.proc.signalCode === null) proc.proc.kill('SIGKILL');
        await proc?.exited;
      },
      async stop() {
        if (!proc) return null;
        if (proc.proc.exitCode === null && proc.proc.signalCode === null) proc.proc.kill('SIGTERM');
        return proc.exited;
      },
      lastStartError: () => startError,
      leads() {
        if (!proc || proc.proc.exitCode !== null || proc.proc.signalCode !== null) return false;
        const out = proc.output();
        return out.lastIndexOf('"msg":"leading') > out.lastIndexOf('"msg":"following') && out.lastIndexOf('"msg":"leading') > out.lastIndexOf('"msg":"leader lease lost');
      },
    };
  });
  return {
    nodes, ingestToken, viewerToken, root: dir.path,
    async stop() {
      await Promise.all(nodes.map((n) => n.kill()));
      dir.cleanup();
    },
  };
}

/** Polls until `done` holds (no timed assertion: the test's own timeout bounds it). */
export async function until(done: () => boolean | Promise<boolean>, everyMs = 100): Promise<void> {
  while (!(await done())) await new Promise((r) => setTimeout(r, everyMs));
}
