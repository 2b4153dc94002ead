import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeEvent } from '../helpers/instance.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { tempDir } from '../helpers/temp.js';
import { until, vigilCluster, type VigilCluster } from '../helpers/vigil-cluster.js';

interface Item { id: string; seq: number; type: string; data: { id: string } }

const SECRET = 'whsec-cluster-export-0123456789';

/** A webhook receiver checking each signature; `refuse` makes it answer 503 (nothing taken). */
async function receiver() {
  const received: Item[] = [];
  let refuse = false;
  let refused = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(req.headers['vigil-signature'] ?? ''));
      const expected = m ? createHmac('sha256', SECRET).update(`${m[1]}.`).update(body).digest() : undefined;
      if (!m || !expected || !timingSafeEqual(expected, Buffer.from(m[2]!, 'hex'))) { res.writeHead(401).end(); return; }
      if (refuse) { refused++; res.writeHead(503).end(); return; }
      received.push(...(JSON.parse(body.toString('utf8')) as { items: Item[] }).items);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    refuse(on: boolean) { refuse = on; },
    refused: () => refused,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

type Hook = Awaited<ReturnType<typeof receiver>>;

let nats: NatsCluster | undefined;
let vigil: VigilCluster | undefined;
let hook: Hook | undefined;
const secrets = tempDir('vigil-cluster-export-');
after(async () => {
  await vigil?.stop();
  await nats?.stop();
  await hook?.close();
  secrets.cleanup();
});

async function ingest(url: string, token: string, ids: readonly string[]): Promise<void> {
  for (;;) {
    const res = await fetch(`${url}/api/v1/events`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'cluster', recordId: id } }))),
    });
    const text = await res.text();
    // Until the survivors agree who leads, a write may be answered 503 with Retry-After (never lost).
    if (res.status === 503) { await new Promise((r) => setTimeout(r, 200)); continue; }
    assert.equal(res.status, 202, text);
    return;
  }
}

interface Status { enabled: boolean; destinations: Array<{ name: string; cursor: number; head: number; lagRecords: number; state: string; delivered: number; failedAttempts: number; deliveredBy?: string }> }

/** Export status through loopback administration on the node asked. */
async function exportsOf(url: string): Promise<Status> {
  const res = await fetch(`${url}/api/v1/exports`);
  assert.equal(res.status, 200);
  return await res.json() as Status;
}

const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

describe('export on a JetStream cluster', () => {
  it('delivers from the leader only, and after the leader dies the next one resumes at the cursor the log records: nothing recorded as delivered is sent again, nothing is lost', { timeout: 300_000 }, async () => {
    hook = await receiver();
    mkdirSync(join(secrets.path, 'secrets'), { recursive: true, mode: 0o700 });
    const secretFile = join(secrets.path, 'secrets', 'hook.secret');
    writeFileSync(secretFile, `${SECRET}\n`, { mode: 0o600 });
    nats = await startNats(1);
    vigil = vigilCluster(nats.urls, 2, {}, {
      server: { host: '127.0.0.1', port: 0, allowLoopbackAdmin: true },
      export: { destinations: [{ name: 'hook', kind: 'webhook', url: hook.url, secretFile, carries: ['events'], events: { adapters: ['e2e'] }, batchSize: 5 }] },
    });
    const [a, b] = vigil.nodes as [typeof vigil.nodes[0], typeof vigil.nodes[0]];
    const pa = await a.start();
    await until(() => a.leads());
    const pb = await b.start();
    assert.equal(b.leads(), false);

    // The leader delivers what a follower took; the follower runs no export of its own.
    const first = ids('first', 23);
    await ingest(pb.url, vigil.ingestToken, first);
    await until(() => hook!.received.length >= first.length);
    const lastSeq = Math.max(...hook.received.map((i) => i.seq));
    // The leader's cursor passes a delivered batch only once the log records it.
    await until(async () => ((await exportsOf(pa.url)).destinations[0]?.cursor ?? 0) >= lastSeq);
    // A follower delivers nothing itself; its status is what the log records of the leader's delivery.
    await until(async () => ((await exportsOf(pb.url)).destinations[0]?.cursor ?? 0) >= lastSeq);
    const follower = await exportsOf(pb.url);
    assert.equal(follower.enabled, true);
    const [seen] = follower.destinations;
    assert.ok(seen);
    assert.deepEqual({ name: seen.name, deliveredBy: seen.deliveredBy, state: seen.state, delivered: seen.delivered, failedAttempts: seen.failedAttempts },
      { name: 'hook', deliveredBy: 'leader', state: 'delivering', delivered: 0, failedAttempts: 0 });
    assert.equal(seen.lagRecords, seen.head - seen.cursor);
    assert.equal((await exportsOf(pa.url)).destinations[0]!.deliveredBy, undefined, 'the leader delivers itself');

    // The receiver stops taking batches: what the leader takes now is never recorded as delivered.
    hook.refuse(true);
    const pending = ids('pending', 7);
    await ingest(pb.url, vigil.ingestToken, pending);
    await until(() => hook!.refused() > 0);

    // The leader dies without a word; the follower takes over and resumes at the recorded cursor.
    await a.kill();
    await until(() => b.leads());
    hook.refuse(false);
    const second = ids('second', 11);
    await ingest(pb.url, vigil.ingestToken, second);
    const all = [...first, ...pending, ...second];
    await until(() => new Set(hook!.received.map((i) => i.data.id)).size >= all.length);
    await until(async () => ((await exportsOf(pb.url)).destinations[0]?.cursor ?? 0) >= Math.max(...hook!.received.map((i) => i.seq)));

    const delivered = hook.received.map((i) => i.data.id);
    assert.deepEqual([...delivered].sort(), [...all].sort(), 'every event delivered exactly once (none recorded as delivered was sent again)');
    const seqs = hook.received.map((i) => i.seq);
    assert.deepEqual(seqs, [...seqs].sort((x, y) => x - y), 'in log order across the failover');
    const itemIds = hook.received.map((i) => i.id);
    assert.equal(new Set(itemIds).size, itemIds.length);
    // Named by the stream and its creation, the same on both nodes: one origin before and after the failover.
    const origins = new Set(itemIds.map((id) => id.split('/').slice(0, 3).join('/')));
    assert.equal(origins.size, 1, `one origin on every node: ${[...origins].join(', ')}`);
    assert.match([...origins][0]!, /^vigil\.stream\/VIGIL_LOG\/[0-9a-f]{32}$/);
    assert.match(pb.output(), /export enabled/);
  });
});
