import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
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
  /** Resolves once its output (since it last started) matches `line`; rejects after 60 s. */
  logged(line: RegExp): Promise<void>;
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
    // "Server is ready" comes before the servers have found each other: until every one knows the
    // JetStream metadata leader, a replicated stream finds no peers to place it on.
    if (count > 1) await Promise.all(servers.map((s) => s.logged(/metadata leader/)));
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
  let startedAt = 0;
  /** Resolves once the output since this start matches `line` (checked as output arrives). */
  const logged = (line: RegExp) => new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { clearInterval(poll); reject(new Error(`nats-server ${name} never logged ${line}: ${out.slice(startedAt)}`)); }, 60_000);
    const poll = setInterval(() => {
      if (line.test(out.slice(startedAt))) { clearTimeout(timer); clearInterval(poll); resolve(); }
    }, 20);
  });
  return {
    url: `nats://127.0.0.1:${port}`,
    name,
    running: () => proc !== undefined && proc.exitCode === null && proc.signalCode === null,
    output: () => out,
    logged,
    async start() {
      const child = spawn(NATS_SERVER, ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
      const from = out.length;
      startedAt = from;
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
