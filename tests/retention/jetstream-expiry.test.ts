import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import * as v from 'valibot';
import { ConfigSchema, type Config } from '../../src/services/config-schema.js';
import { openInstanceStore, storeOptions, type InstanceStore } from '../../src/cli/instance/open.js';
import { connectJetStreamNode, leaderOnly, type JetStreamNode } from '../../src/cli/instance/jetstream-node.js';
import { createPipeline } from '../../src/commands/pipeline.js';
import { DEFAULT_DETECTION } from '../../src/cli/instance/open.js';
import { instanceDetector } from '../../src/commands/alerting/detection-step.js';
import { streamSettings } from '../../src/log/jetstream-connect.js';
import { startFromCut } from '../../src/log/jetstream-cut.js';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { startInstanceCheckpointer } from '../../src/cli/instance/checkpoints.js';
import { openInstanceSigner } from '../../src/cli/instance/head-signing.js';
import { installBuiltinRules } from '../../src/cli/instance/builtin-rules.js';
import type { Transparency } from '../../src/log/checkpointer.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { verifyLog } from '../../src/log/verify.js';
import { verifyTree } from '../../src/log/verify-tree.js';
import { verifyWithArchives } from '../../src/services/retention/verify-archives.js';
import { startRetention, type RetentionRunner } from '../../src/services/retention/scheduler.js';
import { archiveDirOf } from '../../src/services/retention/expire.js';
import { followCut } from '../../src/services/retention/follow-cut.js';
import { logVerify } from '../../src/cli/log-commands.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { tempDir } from '../helpers/temp.js';
import { day, dnsEvent, dump, ingest, sshFailure } from './helpers.js';


let cluster: Promise<NatsCluster> | undefined;
const nats = () => (cluster ??= startNats(1));
after(async () => { if (cluster) await (await cluster).stop(); });
let streams = 0;

/** One `vigil serve` node of a JetStream cluster, in this process and wired as serve.ts wires it, with a clock the test moves. */
interface Node {
  readonly config: Config;
  readonly node: JetStreamNode;
  readonly inst: InstanceStore;
  readonly transparency: Transparency;
  /** The node's retention, as `vigil serve` starts it, with the time of `clock()`. */
  retention(clock: () => string): Promise<RetentionRunner>;
  close(): Promise<void>;
}

/** Starts a node on `stream` with its store in `home` (reused by a restart). */
/** The key every node of these clusters signs with: one log, one key (docs/scale-out.md, "Signed heads"). */
const clusterKey = join(tempDir('vigil-cluster-key-').path, 'log-signing.key');

async function startNode(stream: string, name: string, home: string): Promise<Node> {
  const { urls } = await nats();
  const config = v.parse(ConfigSchema, {
    log: { signer: { keyFile: clusterKey } },
    auth: { credentialsFile: join(home, 'secrets', 'credentials.json') },
    storage: { path: join(home, 'store'), backend: 'jetstream', jetstream: { servers: [...urls], stream, replicas: 1, leaseSeconds: 3, nodeName: name } },
    retention: { enabled: true, evidenceDays: 30, segmentRecords: 256 },
  });
  const node = await connectJetStreamNode(config, () => {});
  const inst = await openInstanceStore(config.storage.path, { ...storeOptions(config), openLog: node.openLog, signer: await openInstanceSigner(config) }).catch(async (err: unknown) => {
    await node.close();
    throw err;
  });
  const transparency = await startInstanceCheckpointer(inst, config);
  await node.start(inst.runtime, async () => { await installBuiltinRules(inst.pipeline, day(0)); }, undefined, followCut(inst.runtime, inst.log));
  const runners: RetentionRunner[] = [];
  return {
    config, node, inst, transparency,
    async retention(clock) {
      const leading = () => node.leadership().leading;
      const runner = await startRetention({
        log: inst.log, pipeline: createPipeline(leaderOnly(inst.writer, leading), instanceDetector(DEFAULT_DETECTION)), carried: inst.carried, checkpoints: transparency, origin: transparency.verifier.name,
        settings: config.retention, archiveDir: archiveDirOf(config.retention, config.storage.path), storePath: config.storage.path,
        node: name, leads: leading, beforeRun: async () => { await node.log()?.purgeBelowCut(); },
      }, () => new Date(clock()), () => {});
      runners.push(runner);
      return runner;
    },
    async close() {
      for (const r of runners) await r.stop();
      await node.quiesce();
      await transparency.stop();
      await inst.close();
      await node.close();
    },
  };
}

/** Polls `check` until it holds (a loaded machine may take a while), failing with `what` after two minutes. */
async function until(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits until `b` holds `a`'s head and its read models equal `a`'s (a follower refolds beside the stream). */
async function sameModels(a: Node, b: Node, what: string): Promise<void> {
  await until(`${what} holds the leader's head`, () => b.inst.log.head().seq === a.inst.log.head().seq);
  const expected = await dump(a.inst);
  let last: unknown;
  await until(`${what}'s read models equal the leader's`, async () => isDeepStrictEqual((last = await dump(b.inst)), expected)).catch(() => undefined);
  assert.deepEqual(last, expected, `${what}'s read models equal the leader's`);
}

/** Alerts raised at day 0 (carried forward), `old` DNS events at day 0 (expiring), 300 fresh ones at day 35. */
async function history(leader: Node, old: number): Promise<void> {
  await ingest(leader.inst, Array.from({ length: 40 }, (_, i) => sshFailure(i, day(0))), day(0));
  assert.ok(leader.inst.writer.models.alerts.alerts.size > 0, 'the sshd failures raise an alert');
  await ingest(leader.inst, Array.from({ length: old }, (_, i) => dnsEvent(i, day(0), i < 150 ? 'gone' : `h${i % 5}`)), day(0));
  await ingest(leader.inst, Array.from({ length: 300 }, (_, i) => dnsEvent(i, day(35), 'h0')), day(35));
}

const stored = (n: Node): Array<[number, string]> => [...n.inst.store.db<string, number>('checkpoints', { keyEncoding: 'uint32' }).getRange({})].map(({ key, value }) => [key, value]);

describe('retention on the JetStream backend', () => {
  it('the leader archives and cuts through the stream, purges the prefix, and every copy (a follower, a restarted one, a new one) folds the same models from the cut', async () => {
    const stream = `RJ${process.pid}_${++streams}`;
    const dirs = [tempDir(), tempDir(), tempDir()];
    const nodes: Node[] = [];
    try {
      const a = await startNode(stream, 'a', dirs[0]!.path);
      nodes.push(a);
      await until('node a leads', () => a.node.leadership().leading);
      let b = await startNode(stream, 'b', dirs[1]!.path);
      nodes.push(b);
      assert.equal(b.node.leadership().leading, false);
      await history(a, 560);

      // A follower's expiry does nothing: only the leader archives and cuts.
      const onB = await b.retention(() => day(40));
      assert.deepEqual(await onB.run(), []);
      const runner = await a.retention(() => day(40));
      const expired = await runner.run();
      assert.deepEqual(expired.map((e) => [e.fromSeq, e.toSeq]), [[1, 256], [257, 512]]);
      assert.equal(a.inst.log.first(), 513);

      // The archives are the LMDB backend's, on the leader, and verify with the live store.
      const dir = archiveDirOf(a.config.retention, a.config.storage.path);
      assert.deepEqual(readdirSync(dir).sort(), expired.map((e) => e.file));
      assert.equal(readdirSync(b.config.storage.path).includes('archive'), false, 'a follower writes no archive');
      const whole = verifyWithArchives(a.inst.log, a.inst.carried, dir, stored(a), a.transparency.verifier);
      assert.deepEqual(whole.ok && [whole.records, whole.archives], [a.inst.log.head().seq, 2], JSON.stringify(whole));

      // The stream no longer holds the messages wholly before the cut.
      const conn = a.node.conn;
      const state = (await conn.jsm.streams.info(stream)).state;
      assert.ok(state.first_seq > 1, 'the prefix is purged');
      const first = await conn.jsm.streams.getMessage(stream, { seq: state.first_seq });
      assert.ok(Number(first!.header.get('Vigil-Seq').split('-')[0]) <= 513 && Number(first!.header.get('Vigil-Seq').split('-')[1]) >= 513, 'the first message kept holds the first record after the cut');
      assert.equal(await conn.jsm.streams.getMessage(stream, { seq: state.first_seq - 1 }), null);

      // The follower applied the cut from the stream.
      await sameModels(a, b, 'the follower');
      assert.equal(b.inst.log.first(), 513);
      assert.deepEqual([...b.inst.log.read(1, 512)], []);
      assert.equal(verifyLog(b.inst.log, b.inst.log.cut()).ok, true);

      // A new node starts from the cut; a restarted follower goes on from its copy.
      const c = await startNode(stream, 'c', dirs[2]!.path);
      nodes.push(c);
      assert.equal(c.inst.log.first(), 513);
      await sameModels(a, c, 'the new node');
      await b.close();
      nodes.splice(nodes.indexOf(b), 1);
      b = await startNode(stream, 'b', dirs[1]!.path);
      nodes.push(b);
      await sameModels(a, b, 'the restarted follower');

      // Appends after the cut reach every copy; each verifies from the cut, its tree included.
      await ingest(a.inst, Array.from({ length: 20 }, (_, i) => dnsEvent(1000 + i, day(40), 'h1')), day(40));
      await sameModels(a, c, 'the new node after more appends');
      for (const n of [a, b, c]) {
        assert.equal(verifyLog(n.inst.log, n.inst.log.cut()).ok, true);
        await n.transparency.make();
        const tree = verifyTree(n.inst.store, n.inst.log, n.transparency.verifier);
        assert.equal(tree.ok, true, JSON.stringify(tree));
        assert.equal(Buffer.from(n.inst.log.tree.root()).toString('base64'), Buffer.from(a.inst.log.tree.root()).toString('base64'), 'every copy has the same Merkle root');
      }
      const cPath = c.config.storage.path;
      await c.close();
      nodes.splice(nodes.indexOf(c), 1);
      const verdict = await logVerify(cPath, c.transparency.verifier);
      assert.equal(verdict.ok, true, `vigil log verify on a copy started from the cut: ${JSON.stringify(verdict)}`);
      // The whole history from the leader's archives and the new node's copy: one cluster, one key, so the archives'
      // checkpoints verify with the key the new node holds.
      assert.equal(c.transparency.verifier.name, a.transparency.verifier.name);
      const fromArchives = await logVerify(cPath, c.transparency.verifier, {}, dir) as { ok: boolean; history?: { records: number; archives: number } };
      assert.equal(fromArchives.ok, true, JSON.stringify(fromArchives));
      assert.deepEqual([fromArchives.history?.records, fromArchives.history?.archives], [a.inst.log.head().seq, 2]);
    } finally {
      for (const n of nodes.reverse()) await n.close();
      for (const d of dirs) d.cleanup();
    }
  });

  it('a store that started from a cut and copied nothing before the stream was purged again starts from the last cut', async () => {
    const stream = `RJ${process.pid}_${++streams}`;
    const dirs = [tempDir(), tempDir()];
    const nodes: Node[] = [];
    try {
      const a = await startNode(stream, 'a', dirs[0]!.path);
      nodes.push(a);
      await until('node a leads', () => a.node.leadership().leading);
      await history(a, 200);
      const runner = await a.retention(() => day(40));
      assert.deepEqual((await runner.run()).map((e) => [e.fromSeq, e.toSeq]), [[1, 256]]);
      // A new node's store starts from that cut (as openJetStreamLog starts it), then the node stops before copying a message.
      const firstAfterCut = (await a.node.conn.jsm.streams.info(stream)).state.first_seq;
      const store = openLmdbStore(join(dirs[1]!.path, 'store'));
      await startFromCut(store, a.node.conn, firstAfterCut);
      await store.close();
      // Meanwhile the leader cuts again (the day-35 records are past 30 days at day 66) and purges past the message it would copy first.
      const later = await a.retention(() => day(66));
      assert.deepEqual((await later.run()).map((e) => [e.fromSeq, e.toSeq]), [[257, 512]]);
      await until('the second purge', async () => (await a.node.conn.jsm.streams.info(stream)).state.first_seq > firstAfterCut);
      const d = await startNode(stream, 'd', dirs[1]!.path);
      nodes.push(d);
      assert.equal(d.inst.log.first(), 513);
      await sameModels(a, d, 'the node started again from the last cut');
      assert.equal(verifyLog(d.inst.log, d.inst.log.cut()).ok, true);
      await d.transparency.make();
      assert.equal(verifyTree(d.inst.store, d.inst.log, d.transparency.verifier).ok, true);
      assert.equal(Buffer.from(d.inst.log.tree.root()).toString('base64'), Buffer.from(a.inst.log.tree.root()).toString('base64'));
    } finally {
      for (const n of nodes.reverse()) await n.close();
      for (const d of dirs) d.cleanup();
    }
  });

  it('a stream an earlier version created (deny_purge, one subject) keeps working without retention, and refuses retention with what to do', async () => {
    const stream = `RJ${process.pid}_${++streams}`;
    const home = tempDir();
    try {
      const { urls } = await nats();
      const configOf = (enabled: boolean) => v.parse(ConfigSchema, {
        auth: { credentialsFile: join(home.path, 'secrets', 'credentials.json') },
        storage: { path: join(home.path, 'store'), backend: 'jetstream', jetstream: { servers: [...urls], stream, replicas: 1, leaseSeconds: 3 } },
        retention: { enabled },
      });
      const plain = await connectJetStreamNode(configOf(false), () => {});
      const legacy = { ...streamSettings(configOf(false).storage.jetstream!, plain.conn, 16 * 1024 * 1024), subjects: [plain.conn.subject], deny_purge: true };
      await plain.conn.jsm.streams.delete(stream);
      await plain.conn.jsm.streams.add(legacy);
      await plain.close();
      const again = await connectJetStreamNode(configOf(false), () => {});
      assert.deepEqual((await again.conn.jsm.streams.info(stream)).config.subjects, [again.conn.subject], 'the stream is left as it was');
      await again.close();
      await assert.rejects(connectJetStreamNode(configOf(true), () => {}), /retention\.enabled needs a stream that can be purged .*deny_purge/);
    } finally {
      home.cleanup();
    }
  });

  it('a leader lost between the cut and the purge leaves the cut in the stream, and the next leader completes the purge', async () => {
    const stream = `RJ${process.pid}_${++streams}`;
    const dirs = [tempDir(), tempDir(), tempDir()];
    const nodes: Node[] = [];
    try {
      const a = await startNode(stream, 'a', dirs[0]!.path);
      await until('node a leads', () => a.node.leadership().leading);
      const b = await startNode(stream, 'b', dirs[1]!.path);
      nodes.push(b);
      // A node that copied the stream's beginning and then stopped, for longer than the retention.
      const away = tempDir();
      dirs.push(away);
      await (await startNode(stream, 'away', away.path)).close();
      // Only the first segment is wholly older than 30 days at day 40.
      await history(a, 200);
      // The leader's connection to NATS goes the moment the cut is in its copy: the purge never happens.
      const stopWatching = a.inst.log.follow(a.inst.log.head().seq, (r) => { if (r.type === 'LogSegmentsExpired') void a.node.conn.nc.close(); });
      const runner = await a.retention(() => day(40));
      const expired = await runner.run();
      stopWatching();
      assert.deepEqual(expired.map((e) => [e.fromSeq, e.toSeq]), [[1, 256]]);
      const leaderModels = await dump(a.inst);
      const head = a.inst.log.head().seq;
      await runner.stop();
      // The node is gone (as after kill -9: nothing more of it reaches NATS).
      await a.transparency.stop();
      await a.inst.close();
      await a.node.close();

      const admin = await connectJetStreamNode(b.config, () => {});
      try {
        assert.equal((await admin.conn.jsm.streams.info(stream)).state.first_seq, 1, 'the cut is in the stream, the prefix not purged yet');
        await until('node b leads', () => b.node.leadership().leading);
        await until('the new leader has purged the prefix', async () => (await admin.conn.jsm.streams.info(stream)).state.first_seq > 1);
      } finally {
        await admin.close();
      }
      assert.equal(b.inst.log.first(), 257);
      assert.equal(b.inst.log.head().seq, head, 'the new leader appended nothing of its own (the rule pack is installed)');
      assert.deepEqual(await dump(b.inst), leaderModels, "the old leader's models after its cut are the new leader's");
      const c = await startNode(stream, 'c', dirs[2]!.path);
      nodes.push(c);
      assert.equal(c.inst.log.first(), 257);
      await sameModels(b, c, 'a node started after the purge');
      // The node that was away is refused with what to do: its next message was purged.
      await assert.rejects(startNode(stream, 'away', away.path), /no longer holds the messages after this store's position .*start the node with an empty storage\.path/);
    } finally {
      for (const n of nodes.reverse()) await n.close();
      for (const d of dirs) d.cleanup();
    }
  });
});
