import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { freePort } from '../setup/processes.js';
import { tempDir } from './temp.js';

/** Debian's nats-server (tests/system-packages.mjs installs it). */
export const NATS_SERVER = '/usr/sbin/nats-server';

/** One real nats-server with JetStream, on loopback ports, its store in a temp dir; it can be killed and started again. */
export interface NatsServer {
  readonly url: string;
  readonly name: string;
  /** Starts the process (again, with the same store and ports); resolves once it accepts clients. */
  start(): Promise<void>;
  /** Kills the process (SIGKILL: no goodbye to the cluster) and waits for it. */
  kill(): Promise<void>;
  running(): boolean;
  output(): string;
}

/** A set of servers (one, or a cluster of three), and how to remove everything. */
export interface NatsCluster {
  readonly servers: readonly NatsServer[];
  readonly urls: readonly string[];
  stop(): Promise<void>;
}

/** Starts `count` nats-servers forming one cluster (a single server when count is 1). */
export async function startNats(count = 1): Promise<NatsCluster> {
  const dir = tempDir('vigil-nats-');
  const ports = await Promise.all(Array.from({ length: count }, async () => ({ client: await freePort(), cluster: await freePort() })));
  const servers = ports.map((p, i) => natsServer(join(dir.path, `n${i}`), `n${i}`, p.client, count > 1 ? { port: p.cluster, routes: ports.filter((_, j) => j !== i).map((q) => q.cluster) } : undefined));
  try {
    await Promise.all(servers.map((s) => s.start()));
    if (count > 1) await untilReplicable(servers.map((s) => s.url), count);
  } catch (err) {
    await Promise.all(servers.map((s) => s.kill()));
    dir.cleanup();
    throw err;
  }
  return {
    servers,
    urls: servers.map((s) => s.url),
    async stop() {
      await Promise.all(servers.map((s) => s.kill()));
      dir.cleanup();
    },
  };
}

/**
 * Waits until the cluster can place a stream of `replicas` copies: "Server is ready" comes before
 * the servers have found each other and elected the JetStream metadata leader, and a `vigil serve`
 * started in that moment is refused ("no suitable peers for placement"). Probes by creating and
 * deleting a stream, for at most 60 s.
 */
async function untilReplicable(urls: readonly string[], replicas: number): Promise<void> {
  const nc = await connect({ servers: [...urls], maxReconnectAttempts: -1 });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        // Creating the manager asks for the account's JetStream info: no answer until there is a leader.
        const jsm = await jetstreamManager(nc, { timeout: 500 });
        await jsm.streams.add({ name: 'READINESS_PROBE', subjects: ['readiness.probe'], num_replicas: replicas });
        await jsm.streams.delete('READINESS_PROBE');
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the NATS cluster could not place a stream of ${replicas} replicas in 60 s: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } finally {
    await nc.close();
  }
}

function natsServer(dir: string, name: string, port: number, cluster: { port: number; routes: number[] } | undefined): NatsServer {
  mkdirSync(dir, { recursive: true });
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, [
    `server_name: ${name}`,
    `listen: 127.0.0.1:${port}`,
    // Batches are one message each: room for the largest request (a 5 MiB collector envelope) and its records.
    'max_payload: 16MB',
    `jetstream { store_dir: "${join(dir, 'js')}" }`,
    ...(cluster ? [`cluster { name: vigil-test, listen: 127.0.0.1:${cluster.port}, routes: [${cluster.routes.map((r) => `nats-route://127.0.0.1:${r}`).join(', ')}] }`] : []),
  ].join('\n'));
  let proc: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let out = '';
  return {
    url: `nats://127.0.0.1:${port}`,
    name,
    running: () => proc !== undefined && proc.exitCode === null && proc.signalCode === null,
    output: () => out,
    async start() {
      const child = spawn(NATS_SERVER, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
      const from = out.length;
      proc = child;
      exited = new Promise((resolve) => child.once('exit', () => resolve()));
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`nats-server ${name} did not start: ${out}`)), 60_000);
        const onData = (chunk: Buffer) => {
          out += chunk.toString();
          if (/Server is ready/.test(out.slice(from))) { clearTimeout(timer); resolve(); }
        };
        child.stdout!.on('data', onData);
        child.stderr!.on('data', onData);
        void exited.then(() => { clearTimeout(timer); reject(new Error(`nats-server ${name} exited: ${out}`)); });
      });
    },
    async kill() {
      if (proc && proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
