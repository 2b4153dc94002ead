/**
 * Scale-out (docs/scale-out.md): the same ingest load against one node on LMDB, one node on
 * JetStream R1 and R3, and three nodes on JetStream R3 (the load split across them, followers
 * forwarding to the leader), in one run; plus a raw publish of the same batches to see where the
 * time goes (the stream's acknowledgement against everything Vigil does around it).
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { benchConfig, cli, root, scratch, startChild, stopChild, token, vigil, type LoadResult } from './harness.js';
import { eventBodies } from './events.js';
import type { Figure } from './foundation.js';
import { startNats, type NatsCluster } from '../tests/helpers/nats.js';

const SECONDS = 12;
const EVENTS_PER_BODY = 500;

/** Runs the load generator in its own process, without blocking this one (several run at once). */
function loadAsync(url: string, bodies: string[], t: string, connections: number): Promise<LoadResult> {
  const dir = scratch('load');
  const jobPath = join(dir, 'job.json');
  writeFileSync(
    jobPath,
    JSON.stringify({ url, bodies, eventsPerBody: EVENTS_PER_BODY, connections, seconds: SECONDS, token: t }),
  );
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, 'dist', 'bench', 'load.js'), jobPath], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load exited ${code}`)),
    );
  });
}

/**
 * Starts `count` vigil serve nodes on the given storage settings, the first one leading; returns their URLs and a stop.
 */
async function startNodes(
  storage: Record<string, unknown>,
  count: number,
): Promise<{ urls: string[]; token: string; stop(): Promise<void> }> {
  const dir = scratch('scaleout');
  const homes = Array.from({ length: count }, (_, i) => join(dir, `node${i}`));
  for (const h of homes) mkdirSync(h, { recursive: true });
  // One log, one key: every node's signer holds the cluster's key (docs/scale-out.md, "Signed heads").
  const keyFile = join(dir, 'keys', 'log-signing.key');
  vigil(['signer', 'key', '--out', keyFile], dir);
  const configs = homes.map((h, i) =>
    benchConfig(h, {
      log: { signer: { keyFile } },
      storage: {
        path: 'store',
        ...storage,
        ...(storage.jetstream ? { jetstream: { ...(storage.jetstream as object), nodeName: `node${i}` } } : {}),
      },
    }),
  );
  const t = token(configs[0]!, homes[0]!, 'bench', 'ingestor');
  for (const h of homes.slice(1)) {
    mkdirSync(join(h, 'secrets'), { recursive: true, mode: 0o700 });
    copyFileSync(join(homes[0]!, 'secrets', 'credentials.json'), join(h, 'secrets', 'credentials.json'));
  }
  const first = await startChild([cli, 'serve', '--config', configs[0]!], homes[0]!);
  const rest = [];
  for (let i = 1; i < count; i++) rest.push(await startChild([cli, 'serve', '--config', configs[i]!], homes[i]!));
  const nodes = [first, ...rest];
  return {
    urls: nodes.map((n) => n.url),
    token: t,
    stop: async () => {
      for (const n of nodes) await stopChild(n.proc);
    },
  };
}

/** The load of one configuration: 4 connections in all, split evenly across the nodes. */
async function measure(
  name: string,
  storage: Record<string, unknown>,
  nodes: number,
  prefix: string,
): Promise<LoadResult & { name: string }> {
  const cluster = await startNodes(storage, nodes);
  try {
    const per = Math.max(1, Math.floor(4 / nodes));
    const results = await Promise.all(
      cluster.urls.map((u, i) =>
        loadAsync(
          `${u}/api/v1/events`,
          eventBodies(`${prefix}${i}`, 200, EVENTS_PER_BODY),
          cluster.token,
          i === 0 ? 4 - per * (nodes - 1) : per,
        ),
      ),
    );
    const all = results.reduce((a, r) => ({
      requests: a.requests + r.requests,
      failures: a.failures + r.failures,
      seconds: Math.max(a.seconds, r.seconds),
      eventsPerSecond: a.eventsPerSecond + r.eventsPerSecond,
      p50ms: Math.max(a.p50ms, r.p50ms),
      p99ms: Math.max(a.p99ms, r.p99ms),
    }));
    return { name, ...all };
  } finally {
    await cluster.stop();
  }
}

/**
 * Sequential publishes of ready-made batches, each waiting for its acknowledgement: the stream's own cost per batch.
 */
async function rawPublish(
  urls: readonly string[],
  replicas: number,
  bytes: Uint8Array,
): Promise<{ perSecond: number; p50ms: number }> {
  const nc = await connect({ servers: [...urls] });
  try {
    const jsm = await jetstreamManager(nc);
    const name = `RAW${replicas}`;
    await jsm.streams.add({
      name,
      subjects: [`raw.${replicas}`],
      storage: 'file' as never,
      num_replicas: replicas,
      max_msg_size: -1,
    });
    const js = jetstream(nc);
    const latencies: number[] = [];
    const t0 = performance.now();
    for (let i = 0; performance.now() - t0 < 5000; i++) {
      const t = performance.now();
      await js.publish(`raw.${replicas}`, bytes, { msgID: `m${i}`, expect: { lastSequence: i } });
      latencies.push(performance.now() - t);
    }
    latencies.sort((a, b) => a - b);
    return {
      perSecond: latencies.length / ((performance.now() - t0) / 1000),
      p50ms: latencies[Math.floor(latencies.length / 2)]!,
    };
  } finally {
    await nc.close();
  }
}

/** The scale-out section. */
export async function scaleoutBench(report: Record<string, unknown>): Promise<Figure[]> {
  const figures: Figure[] = [];
  let one: NatsCluster | undefined;
  let three: NatsCluster | undefined;
  try {
    one = await startNats(1);
    three = await startNats(3);
    const js = (urls: readonly string[], replicas: number, stream: string) => ({
      backend: 'jetstream',
      jetstream: { servers: [...urls], stream, replicas },
    });
    const runs = [
      await measure('1 node, LMDB', {}, 1, 'l'),
      await measure('1 node, JetStream R1 (1 server)', js(one.urls, 1, 'BENCH_R1'), 1, 'r1'),
      await measure('1 node, JetStream R3 (3 servers)', js(three.urls, 3, 'BENCH_R3'), 1, 'r3'),
      await measure('3 nodes, JetStream R3, load split across them', js(three.urls, 3, 'BENCH_3N'), 3, 'n3'),
    ];
    const base = runs[0]!.eventsPerSecond;
    for (const r of runs) {
      figures.push({
        name: `${r.name}: POST /api/v1/events (${EVENTS_PER_BODY}-event batches, 4 connections in all)`,
        value: Math.round(r.eventsPerSecond),
        unit: 'events/s',
        note: `p50 ${r.p50ms.toFixed(1)} ms, p99 ${r.p99ms.toFixed(1)} ms, ${r.failures} failures`,
      });
    }
    for (const r of runs.slice(1))
      figures.push({
        name: `${r.name} / 1 node LMDB`,
        value: Math.round((r.eventsPerSecond / base) * 1000) / 10,
        unit: '%',
      });
    // Where the time goes: the same batch published raw (no Vigil) and acknowledged, one at a time.
    const batch = new Uint8Array(Buffer.from(eventBodies('raw', 1, EVENTS_PER_BODY)[0]!));
    for (const [urls, replicas] of [
      [one.urls, 1],
      [three.urls, 3],
    ] as const) {
      const raw = await rawPublish(urls, replicas, batch);
      figures.push({
        name:
          `raw JetStream publish of one ${EVENTS_PER_BODY}-event batch (${batch.byteLength} B), R${replicas}, ` +
          `acknowledged one at a time`,
        value: Math.round(raw.perSecond * EVENTS_PER_BODY),
        unit: 'events/s',
        note: `ack p50 ${raw.p50ms.toFixed(2)} ms`,
      });
    }
    report.scaleout = runs;
  } finally {
    await one?.stop();
    await three?.stop();
  }
  return figures;
}
