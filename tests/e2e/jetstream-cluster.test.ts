import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { storedEventIds } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { until, vigilCluster, type VigilCluster } from '../helpers/vigil-cluster.js';

let nats: NatsCluster | undefined;
let vigil: VigilCluster | undefined;
after(async () => {
  await vigil?.stop();
  await nats?.stop();
});

function ingest(url: string, token: string, ids: readonly string[]): Promise<Response> {
  return fetch(`${url}/api/v1/events`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'cluster', recordId: id } }))),
  });
}

describe('three vigil serve nodes on one JetStream stream', () => {
  it('elects one leader, forwards writes from followers, reads its writes on every node, and fails over when the leader dies', { timeout: 240_000 }, async () => {
    nats = await startNats(1);
    vigil = vigilCluster(nats.urls, 3, {}, { server: { host: '127.0.0.1', port: 0, allowLoopbackAdmin: true } });
    const [a, b, c] = vigil.nodes as [typeof vigil.nodes[0], typeof vigil.nodes[0], typeof vigil.nodes[0]];
    const pa = await a.start();
    await until(() => a.leads());
    const [pb, pc] = [await b.start(), await c.start()];
    assert.equal(b.leads(), false);
    assert.equal(c.leads(), false);

    // A write through a follower is forwarded to the leader; the follower answers once its copy holds it.
    const first = Array.from({ length: 20 }, (_, i) => `f-${i}`);
    const res = await ingest(pb.url, vigil.ingestToken, first);
    assert.equal(res.status, 202, await res.text());
    assert.deepEqual([...await storedEventIds(pb.url, vigil.viewerToken, 'e2e')].sort(), [...first].sort(), 'read your write on the follower that took it');
    assert.deepEqual([...await storedEventIds(pc.url, vigil.viewerToken, 'e2e')].sort(), [...first].sort(), 'and on the other follower');
    assert.deepEqual([...await storedEventIds(pa.url, vigil.viewerToken, 'e2e')].sort(), [...first].sort(), 'and on the leader');
    // A follower's reads are recorded too (their access records go through the leader): each node's reads are in the trail.
    await until(async () => {
      const res = await fetch(`${pa.url}/api/v1/events?adapter=vigil&limit=1000`, { headers: { authorization: `Bearer ${vigil!.viewerToken}` } });
      const page = await res.json() as { events: Array<{ class: string; attributes: Record<string, unknown> }> };
      return page.events.filter((e) => e.class === 'api_access' && e.attributes['method'] === 'GET' && e.attributes['route'] === '/api/v1/events').length >= 3;
    }, 250);

    // Loopback administration belongs to the node a client reached: a read there, never a forwarded write.
    assert.equal((await fetch(`${pb.url}/api/v1/me`)).status, 200);
    const forwardedAsAdmin = await fetch(`${pb.url}/api/v1/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([makeEvent({ id: 'no-token' })]) });
    assert.equal(forwardedAsAdmin.status, 401, await forwardedAsAdmin.text());

    // The leader dies without a word: another node takes over within the lease, and writes go on.
    await a.kill();
    await until(() => b.leads() || c.leads());
    const second = Array.from({ length: 20 }, (_, i) => `s-${i}`);
    for (const p of [pb, pc]) {
      let r: Response;
      // Until the survivors agree who leads, a write may be answered 503 with Retry-After (never lost).
      for (;;) {
        r = await ingest(p.url, vigil.ingestToken, second);
        if (r.status !== 503) break;
        assert.ok(r.headers.get('retry-after'), 'a 503 says when to retry');
        await r.text();
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(r.status, 202, await r.text());
    }
    const all = [...first, ...second].sort();
    const pa2 = await a.start();
    assert.equal(a.leads(), false, 'the old leader comes back as a follower');
    for (const p of [pa2, pb, pc]) assert.deepEqual([...await storedEventIds(p.url, vigil.viewerToken, 'e2e')].sort(), all);
  });
});
