import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager, type StreamConfig } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { runCli } from '../helpers/cli.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { until, vigilCluster, type VigilCluster } from '../helpers/vigil-cluster.js';

let nats: NatsCluster | undefined;
let vigil: VigilCluster | undefined;
after(async () => {
  await vigil?.stop();
  await nats?.stop();
});

const SECOND = 1_000_000_000;

/** A stream's configuration as NATS holds it (the log's stream, or the lease bucket's KV_<stream>_leader). */
async function streamConfig(urls: readonly string[], name: string): Promise<StreamConfig> {
  const nc = await connect({ servers: [...urls] });
  try {
    return (await (await jetstreamManager(nc)).streams.info(name)).config;
  } finally { await nc.close(); }
}

/** Changes `storage.jetstream` in node `i`'s configuration file. */
function configure(cluster: VigilCluster, i: number, jetstream: Record<string, unknown>): string {
  const path = join(cluster.root, `node${i}`, 'vigil.config.json');
  const config = JSON.parse(readFileSync(path, 'utf8')) as { storage: { jetstream: Record<string, unknown> } };
  config.storage.jetstream = { ...config.storage.jetstream, ...jetstream };
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** The settings lines a node logged (`cluster setting updated to match the configuration`). */
function settingLines(output: string): Array<Record<string, unknown>> {
  return output.split('\n').filter((l) => l.includes('"msg":"cluster setting updated')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('cluster settings in NATS checked against the configuration at start', () => {
  it('updates the lease time and a stream limit, and refuses a node with other settings while a node leads', { timeout: 240_000 }, async () => {
    nats = await startNats(1);
    vigil = vigilCluster(nats.urls, 2, { leaseSeconds: 10 });
    const [a, b] = vigil.nodes as [typeof vigil.nodes[0], typeof vigil.nodes[0]];
    const first = await a.start();
    await until(() => a.leads());
    await a.stop();
    assert.equal((await streamConfig(nats.urls, 'KV_VIGIL_LOG_leader')).max_age, 10 * SECOND, 'the bucket was made with the first lease time');

    // Restarted with leaseSeconds 3: the bucket's max_age follows, and the node says so.
    configure(vigil, 0, { leaseSeconds: 3 });
    configure(vigil, 1, { leaseSeconds: 3 });
    const pa = await a.start();
    await until(() => a.leads());
    assert.equal((await streamConfig(nats.urls, 'KV_VIGIL_LOG_leader')).max_age, 3 * SECOND);
    assert.deepEqual(settingLines(pa.output()).map((l) => [l.stream, l.setting, l.old, l.new, l.level]), [['KV_VIGIL_LOG_leader', 'max_age', '10 s', '3 s', 'info']]);

    // A second node with the same configuration changes nothing; it takes over when the leader is killed.
    const pb = await b.start();
    assert.deepEqual(settingLines(pb.output()), []);
    await a.kill();
    await until(() => b.leads());
    assert.equal((await streamConfig(nats.urls, 'KV_VIGIL_LOG_leader')).max_age, 3 * SECOND, 'the new leader runs on the 3 s lease');

    // A node whose configuration differs from the leader's is refused, and changes nothing.
    const other = configure(vigil, 0, { leaseSeconds: 10 });
    const refused = runCli(['serve', '--config', other], { cwd: join(vigil.root, 'node0') });
    assert.equal(refused.status, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /^vigil: refusing to start: node node1 leads the cluster with other settings \(storage\.jetstream\.leaseSeconds is 3 there and 10 here\)/);
    assert.match(refused.stderr, /restart the leader too/);
    assert.equal((await streamConfig(nats.urls, 'KV_VIGIL_LOG_leader')).max_age, 3 * SECOND);
    assert.equal(await b.stop(), 0);

    // A longer publish timeout needs a longer duplicate window: applied in place, with its line.
    assert.equal((await streamConfig(nats.urls, 'VIGIL_LOG')).duplicate_window, 120 * SECOND);
    configure(vigil, 0, { leaseSeconds: 3, publishTimeoutSeconds: 60 });
    const longer = await a.start();
    assert.equal((await streamConfig(nats.urls, 'VIGIL_LOG')).duplicate_window, 240 * SECOND);
    assert.deepEqual(settingLines(longer.output()).map((l) => [l.stream, l.setting, l.old, l.new]), [['VIGIL_LOG', 'duplicate_window', '120 s', '240 s']]);
    assert.equal(await a.stop(), 0);

  });

  it('changes the replicas of the stream and the lease bucket when the cluster can place them, and refuses when NATS cannot', { timeout: 240_000 }, async () => {
    await vigil?.stop();
    await nats?.stop();
    nats = await startNats(3);
    vigil = vigilCluster(nats.urls, 1, { replicas: 1 });
    const [a] = vigil.nodes as [typeof vigil.nodes[0]];
    const first = await a.start();
    await until(() => a.leads());
    await a.stop();

    configure(vigil, 0, { replicas: 3 });
    const r3 = await a.start();
    await until(() => a.leads());
    assert.equal((await streamConfig(nats.urls, 'VIGIL_LOG')).num_replicas, 3);
    assert.equal((await streamConfig(nats.urls, 'KV_VIGIL_LOG_leader')).num_replicas, 3);
    assert.deepEqual(settingLines(r3.output()).map((l) => [l.stream, l.setting, l.old, l.new]), [['VIGIL_LOG', 'num_replicas', '1', '3'], ['KV_VIGIL_LOG_leader', 'num_replicas', '1', '3']]);
    assert.equal(await a.stop(), 0);

    // Five replicas on three servers: NATS refuses, so does the node, naming both values and what to do.
    const r5 = configure(vigil, 0, { replicas: 5 });
    const refused = runCli(['serve', '--config', r5], { cwd: join(vigil.root, 'node0') });
    assert.equal(refused.status, 1, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /^vigil: refusing to start: VIGIL_LOG: num_replicas is 3 in NATS and storage\.jetstream\.replicas asks for 5, and NATS refused the change \(.+\): run 5 NATS servers in one cluster with JetStream on, or set storage\.jetstream\.replicas back to 3 on every node/);
    assert.equal((await streamConfig(nats.urls, 'VIGIL_LOG')).num_replicas, 3);
    assert.equal((await streamConfig(nats.urls, 'KV_VIGIL_LOG_leader')).num_replicas, 3);
  });
});
