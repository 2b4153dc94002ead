import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { listedEventIds } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { until, vigilCluster, type VigilCluster, type VigilNode } from '../helpers/vigil-cluster.js';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { hashBytes } from '../../src/log/record.js';
import { verifyLog } from '../../src/log/verify.js';

let nats: NatsCluster | undefined;
let vigil: VigilCluster | undefined;
after(async () => {
  await vigil?.stop();
  await nats?.stop();
});

/**
 * One client per node posting batches of new events for as long as it runs. Only a 202 counts as
 * acknowledged; anything else (503 during a leader change, a refused connection while the node is
 * down, a timeout) may or may not have been stored, which the checks allow: ingest is idempotent.
 */
function load(nodes: readonly VigilNode[], token: string): { acknowledged(): number; answers(): Record<string, number>; stop(): Promise<string[]> } {
  const acknowledged: string[] = [];
  const answers: Record<string, number> = {};
  let stopped = false;
  const workers = nodes.map(async (node, w) => {
    for (let b = 0; !stopped; b++) {
      const url = node.current()?.url;
      const ids = Array.from({ length: 10 }, (_, i) => `j${w}-${b}-${i}`);
      try {
        if (!url) throw new Error('down');
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'jepsen', instance: `w${w}`, recordId: id } }))),
          signal: AbortSignal.timeout(60_000),
        });
        await res.arrayBuffer();
        answers[res.status] = (answers[res.status] ?? 0) + 1;
        if (res.status === 202) acknowledged.push(...ids);
        else await new Promise((r) => setTimeout(r, 100));
      } catch {
        answers.unreachable = (answers.unreachable ?? 0) + 1;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  });
  return {
    acknowledged: () => acknowledged.length,
    answers: () => answers,
    async stop() {
      stopped = true;
      await Promise.all(workers);
      return acknowledged;
    },
  };
}

const refusedReads = new Map<string, number>();

/**
 * A GET from a node as a client of a supervised service sees it: retried while the node answers 503
 * with Retry-After (a leader change, NATS catching up) and while it is down (it stopped itself, an
 * outcome unknown; the supervisor starts it again, on a new port).
 */
async function getFrom(node: VigilNode, pathAndQuery: string, token: string): Promise<Response> {
  for (;;) {
    const url = node.current()?.url;
    // Bounded, so a read that hangs shows up as such (a node's request that never ends) and is tried again.
    const res = url ? await fetch(`${url}${pathAndQuery}`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(30_000) }).catch((err: unknown) => (err as Error).name === 'TimeoutError' ? 'timed out' as const : undefined) : undefined;
    if (res && res !== 'timed out' && res.status !== 503) return res;
    const refused = (why: string) => refusedReads.set(`${node.name}: ${why}`, (refusedReads.get(`${node.name}: ${why}`) ?? 0) + 1);
    if (res === 'timed out') refused('no answer in 30 s');
    else if (res) {
      assert.ok(res.headers.get('retry-after'), 'a 503 says when to retry');
      refused((await res.json() as { error: string }).error);
    } else refused('down');
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function readJson(node: VigilNode, path: string, token: string): Promise<unknown> {
  const res = await getFrom(node, path, token);
  assert.equal(res.status, 200, path);
  return res.json();
}

/** The node's events of the test, page by page (each page from wherever the node now listens). */
const listedBy = (node: VigilNode, token: string) => listedEventIds('http://node', token, 'jepsen', (u) => {
  const at = new URL(u);
  return getFrom(node, at.pathname + at.search, token);
});

describe('a JetStream cluster under faults (Jepsen-like)', () => {
  it('keeps every acknowledged event exactly once on every node while leaders and NATS servers are killed and restarted', { timeout: 300_000 }, async (t) => {
    const started = performance.now();
    nats = await startNats(3);
    vigil = vigilCluster(nats.urls, 3, { replicas: 3, publishTimeoutSeconds: 10 });
    const nodes = vigil.nodes;
    // Started as systemd starts them (Restart=always): a node that finds no stream leader yet tries again.
    await nodes[0]!.startUntilUp();
    await until(() => nodes[0]!.leads());
    await Promise.all(nodes.slice(1).map((n) => n.startUntilUp()));
    // A supervisor, as systemd's Restart=always: a node that stopped itself (outcome unknown) comes back.
    let supervising = true;
    // The test ended (the signal is aborted either way): supervision stops before the nodes are
    // killed. Ended without finishing (timed out), the loops below would keep this file's process,
    // and the whole run, alive for ever.
    let finished = false;
    t.signal.addEventListener('abort', () => {
      supervising = false;
      if (!finished) setTimeout(() => process.exit(1), 15_000).unref();
    });
    let selfStopped = 0;
    const stoppedOutput: string[] = [];
    const down = new Set<VigilNode>();
    const supervisor = (async () => {
      while (supervising) {
        for (const n of nodes) {
          const p = n.current();
          if (!down.has(n) && p && (p.proc.exitCode !== null || p.proc.signalCode !== null)) {
            selfStopped++;
            stoppedOutput.push(p.output().split('\n').filter((l) => /"level":"(fatal|error|warn)"/.test(l)).slice(-5).join('\n'));
            await n.startUntilUp();
          }
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const traffic = load(nodes, vigil.ingestToken);
    const progress = async (more: number) => { const from = traffic.acknowledged(); await until(() => traffic.acknowledged() >= from + more); };
    const t0 = performance.now();
    console.log(`set-up took ${Math.round(t0 - started)} ms`);
    const phases: string[] = [];
    const mark = (what: string) => phases.push(`${what}@${Math.round((performance.now() - t0) / 100) / 10}s`);
    // Stuck somewhere (the test's timeout would say only that): where, and what the nodes last said.
    const watchdog = setTimeout(() => console.log(JSON.stringify({
      stuckAfter: phases, acknowledged: traffic.acknowledged(), answers: traffic.answers(), selfStopped, refusedReads: Object.fromEntries(refusedReads),
      nodes: nodes.map((n) => ({ name: n.name, up: n.current()?.proc.exitCode === null, leads: n.leads(), startError: n.lastStartError(), said: (n.current()?.output() ?? '').split('\n').filter((l) => l.trim() !== '').slice(-12) })),
      nats: nats!.servers.map((s) => ({ name: s.name, running: s.running(), said: s.output().split('\n').filter((l) => /\[(ERR|WRN)\]/.test(l)).slice(-8) })),
    })), 270_000);
    watchdog.unref();
    try {
      await progress(50);
      for (let round = 0; round < 3; round++) {
        // The leader dies without a word: another node takes over within the lease.
        await until(() => nodes.some((n) => n.leads()));
        const leader = nodes.find((n) => n.leads())!;
        down.add(leader);
        await leader.kill();
        mark('leader killed');
        await until(() => nodes.some((n) => n !== leader && n.leads()));
        mark('new leader');
        await progress(20);
        mark('writes went on');
        await leader.startUntilUp();
        down.delete(leader);
        mark('old leader back');
        // One NATS server of three dies: the stream (R3) keeps a majority, writes go on.
        const server = nats.servers[round % 3]!;
        await server.kill();
        mark('nats killed');
        // Down for a while under load (a fault schedule, not a wait for a condition), and writes must go on.
        await Promise.all([progress(30), new Promise((r) => setTimeout(r, 2000))]);
        mark('writes went on');
        await server.start();
        await progress(20);
        mark('nats back');
      }
    } finally {
      // On a failure too: the clients must stop for the test process to end.
      await traffic.stop();
    }
    const acknowledged = await traffic.stop();
    mark('load stopped');
    const answers = traffic.answers();
    const fatalLines = (n: VigilNode) => (n.current()?.output() ?? '').split('\n').filter((l) => /"level":"(fatal|error)"/.test(l)).slice(0, 5);
    const diagnostics = () => JSON.stringify({ answers, selfStopped, fatal: nodes.map(fatalLines) });
    assert.ok(acknowledged.length >= 200, `only ${acknowledged.length} events acknowledged (${diagnostics()})`);

    // Every node lists every acknowledged event exactly once, and the same events.
    // The supervisor goes on through the checks: a node may still stop itself (a write of its own,
    // such as an access record, whose outcome it cannot know) and come back.
    const lists = await Promise.all(nodes.map((n) => listedBy(n, vigil!.viewerToken)));
    for (const [i, ids] of lists.entries()) {
      const seen = new Set(ids);
      assert.equal(seen.size, ids.length, `node${i} lists an event twice`);
      const missing = acknowledged.filter((id) => !seen.has(id));
      assert.deepEqual(missing.slice(0, 5), [], `node${i} lost ${missing.length} acknowledged events`);
      assert.deepEqual([...seen].sort(), [...new Set(lists[0])].sort(), `node${i} lists other events than node0`);
    }
    mark('events listed');
    // The read models agree.
    for (const path of ['/api/v1/alerts?limit=1000', '/api/v1/incidents', '/api/v1/rules']) {
      const views = await Promise.all(nodes.map((n) => readJson(n, path, vigil!.viewerToken)));
      for (const v of views.slice(1)) assert.deepEqual(v, views[0], path);
    }
    mark('read models compared');
    supervising = false;
    await supervisor;
    // One that stopped itself as supervision ended comes back, to be stopped cleanly.
    for (const n of nodes) {
      const p = n.current();
      if (!p || p.proc.exitCode !== null || p.proc.signalCode !== null) {
        selfStopped++;
        await n.startUntilUp();
      }
    }
    // How often a node found its stream consumer stalled and replaced it (docs/scale-out.md).
    const consumersReplaced = nodes.map((n) => (n.current()?.output() ?? '').split('\n').filter((l) => /following again|catching up with the stream stalled/.test(l)).length);
    for (const n of nodes) assert.equal(await n.stop(), 0, `${n.name} stops cleanly`);
    mark('nodes stopped');

    // Every copy verifies, and all are prefixes of one chain.
    const heads: { seq: number; hashAt: (seq: number) => string }[] = [];
    for (const n of nodes) {
      const store = openLmdbStore(join(vigil.root, n.name, 'store'));
      try {
        const log = openLmdbLog(store);
        const result = verifyLog(log);
        assert.equal(result.ok, true, `${n.name}: ${JSON.stringify(result)}`);
        const raw = new Map([...log.readRaw(1)].map((r) => [r.seq, hashBytes(r.bytes)]));
        heads.push({ seq: log.head().seq, hashAt: (s) => raw.get(s)! });
        await log.close();
      } finally {
        await store.close();
      }
    }
    mark('copies verified');
    const shortest = Math.min(...heads.map((h) => h.seq));
    for (const h of heads.slice(1)) assert.equal(h.hashAt(shortest), heads[0]!.hashAt(shortest), 'the copies are one chain');
    clearTimeout(watchdog);
    finished = true;
    console.log(JSON.stringify({ acknowledged: acknowledged.length, answers, selfStopped, records: shortest, phases, consumersReplaced }));
    if (stoppedOutput.length > 0) console.log(stoppedOutput.join('\n---\n'));
    console.log(JSON.stringify([...refusedReads]));
  });
});
