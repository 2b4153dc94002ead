import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { unpackBatch } from '../../src/log/jetstream-batch.js';
import { connectJetStream } from '../../src/log/jetstream-connect.js';
import { cutOfBatch } from '../../src/log/jetstream-cut.js';
import { decodeRecord } from '../../src/log/record.js';
import { listedEventIds, runCli } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { until, vigilCluster, type VigilCluster } from '../helpers/vigil-cluster.js';

let nats: NatsCluster | undefined;
let vigil: VigilCluster | undefined;
after(async () => {
  await vigil?.stop();
  await nats?.stop();
});

/** Posts five events; answers whether they were acknowledged (a 503 during a leader change is not). */
async function ingest(url: string, token: string, ids: readonly string[]): Promise<boolean> {
  const res = await fetch(`${url}/api/v1/events`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'retention', recordId: id } }))),
  }).catch(() => undefined);
  if (!res) return false;
  await res.text();
  return res.status === 202;
}

/** A GET, retried while the node answers 503 with Retry-After (a loaded machine: the leader did not answer a forwarded record in time). */
async function get(url: string, token: string): Promise<Response> {
  for (;;) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 503) return res;
    assert.ok(res.headers.get('retry-after'), 'a 503 says when to retry');
    await res.text();
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** The live events of the test, as a node lists them. */
const listed = async (url: string, token: string) => new Set(await listedEventIds(url, token, 'e2e', (u) => get(u, token)));

const archivesIn = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.jsonl')) : []);

/** Event ids held by the archive files (EventsIngested records). */
function archivedIds(dirs: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const dir of dirs) {
    for (const f of archivesIn(dir)) {
      for (const line of readFileSync(join(dir, f), 'utf8').split('\n').slice(1)) {
        if (!line) continue;
        const r = JSON.parse(line) as { type: string; data: { events?: Array<{ id: string }> } };
        if (r.type === 'EventsIngested') for (const e of r.data.events ?? []) ids.add(e.id);
      }
    }
  }
  return ids;
}

describe('retention on a JetStream cluster of vigil serve nodes', () => {
  it('the leader archives and purges, a new leader goes on after kill -9, every copy lists the same live events and verifies, and the archives of both leaders verify the whole history', { timeout: 420_000 }, async () => {
    nats = await startNats(1);
    vigil = vigilCluster(nats.urls, 2, {}, {
      server: { host: '127.0.0.1', port: 0, allowLoopbackAdmin: false },
      // Evidence expires as soon as its segment is whole; everything else is carried forward.
      retention: { enabled: true, evidenceDays: 0, segmentRecords: 256, checkSeconds: 1 },
    });
    const [a, b] = vigil.nodes as [typeof vigil.nodes[0], typeof vigil.nodes[0]];
    const home = (i: number) => join(vigil!.root, `node${i}`);
    const archiveDir = (i: number) => join(home(i), 'store', 'archive');
    let pa = await a.start();
    await until(() => a.leads());
    const pb = await b.start();
    const acknowledged: string[] = [];
    let batch = 0;
    /** Ingests through both nodes until `done`. */
    const ingestUntil = async (urls: () => string[], done: () => boolean | Promise<boolean>) => {
      while (!(await done())) {
        for (const url of urls()) {
          const ids = Array.from({ length: 5 }, (_, i) => `b${batch}-e${i}`);
          batch++;
          if (await ingest(url, vigil!.ingestToken, ids)) acknowledged.push(...ids);
        }
      }
    };

    // The leader expires two segments: archives on its machine, none on the follower's.
    await ingestUntil(() => [pa.url, pb.url], () => archivesIn(archiveDir(0)).length >= 2);
    assert.equal(archivesIn(archiveDir(1)).length, 0, 'a follower archives nothing');
    /** The first live record after the stream's last cut (1 before any cut). */
    const firstLive = async () => {
      const conn = await connectJetStream({ servers: [...nats!.urls], stream: 'VIGIL_LOG', replicas: 1, leaseSeconds: 3, publishTimeoutSeconds: 10 }, 'test');
      try {
        const last = await conn.jsm.streams.getMessage(conn.stream, { last_by_subj: conn.cutSubject });
        return last ? cutOfBatch(unpackBatch(last.data).map((b) => decodeRecord(b)))?.firstSeq ?? 1 : 1;
      } finally {
        await conn.close();
      }
    };
    await until(async () => (await firstLive()) > 1, 200);

    // The leader dies in the middle of it; the follower leads, the old leader comes back as a follower.
    await a.kill();
    await until(() => b.leads());
    pa = await a.start();
    assert.equal(a.leads(), false);
    // The new leader goes on until it has archived and cut a segment the old one never archived
    // (the old one may have archived a segment it did not live to cut: the new one archives it again).
    const lastArchivedBy0 = Math.max(...archivesIn(archiveDir(0)).map((f) => Number(/^segment-\d{12}-(\d{12})-/.exec(f)?.[1])));
    await ingestUntil(() => [pb.url, pa.url], async () => (await firstLive()) > lastArchivedBy0 + 1);

    // Both copies list the same live events (listed one after the other while the leader may still
    // expire a segment in between: until two listings agree); every acknowledged event is live or archived.
    let onB = new Set<string>();
    let onA = new Set<string>();
    for (let tries = 0; tries < 20; tries++) {
      onB = await listed(pb.url, vigil.viewerToken);
      onA = await listed(pa.url, vigil.viewerToken);
      if (onA.size === onB.size && [...onA].every((id) => onB.has(id))) break;
    }
    assert.deepEqual([...onA].sort(), [...onB].sort(), 'the follower lists what the leader lists');
    const archived = archivedIds([archiveDir(0), archiveDir(1)]);
    const lost = acknowledged.filter((id) => !onB.has(id) && !archived.has(id));
    assert.deepEqual(lost, [], 'every acknowledged event is in the live store or in an archive');
    assert.ok(acknowledged.some((id) => !onB.has(id)), 'some acknowledged events expired');

    assert.equal(await b.stop(), 0);
    assert.equal(await a.stop(), 0);
    // Each copy verifies from its cut; with both leaders' archives (gathered in one folder) and
    // both leaders' keys, the whole history verifies on each.
    const gathered = join(vigil.root, 'gathered');
    mkdirSync(gathered);
    // Each leader's archives carry its name: a segment one leader archived but never cut (it died,
    // or lost the lease) sits beside the copy the next leader archived and cut, and is not used.
    for (const i of [0, 1]) {
      for (const f of archivesIn(archiveDir(i))) {
        assert.match(f, new RegExp(`^segment-\\d{12}-\\d{12}-node${i}\\.jsonl$`));
        copyFileSync(join(archiveDir(i), f), join(gathered, f));
      }
    }
    const keys = join(vigil.root, 'keys.txt');
    writeFileSync(keys, [0, 1].map((i) => runCli(['log', 'public-key', '--config', join(home(i), 'vigil.config.json')]).stdout.trim()).join('\n'));
    for (const i of [0, 1]) {
      const config = join(home(i), 'vigil.config.json');
      const fromCut = runCli(['log', 'verify', '--config', config]);
      assert.equal(fromCut.status, 0, fromCut.stdout + fromCut.stderr);
      const verdict = JSON.parse(fromCut.stdout) as { ok: boolean; from?: number };
      assert.ok(verdict.ok && verdict.from !== undefined && verdict.from > 512, fromCut.stdout);
      const whole = runCli(['log', 'verify', '--config', config, '--archives', gathered, '--archive-keys', keys]);
      assert.equal(whole.status, 0, whole.stdout + whole.stderr);
      const history = (JSON.parse(whole.stdout) as { history: { records: number; archives: number } }).history;
      assert.ok(history.archives >= 3, whole.stdout);
    }
  });
});
