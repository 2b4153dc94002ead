import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { connect as tcpConnect } from 'node:net';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { until, vigilCluster, type VigilCluster } from '../helpers/vigil-cluster.js';

const LOGGER = '/usr/bin/logger';

let nats: NatsCluster | undefined;
let vigil: VigilCluster | undefined;
after(async () => {
  await vigil?.stop();
  await nats?.stop();
});

/** Sends bytes over one TCP connection and waits until it is closed. */
function send(port: number, bytes: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = tcpConnect(port, '127.0.0.1', () => s.end(bytes));
    s.on('close', () => resolve());
    s.on('error', reject);
  });
}

interface StoredEvent { id: string; attributes: Record<string, unknown> }

/** Every syslog message text stored, as the node at `url` reads them. */
async function messages(url: string, token: string): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const res: Response = await fetch(`${url}/api/v1/events?adapter=syslog-rfc5424&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200);
    const page = await res.json() as { events: StoredEvent[]; nextCursor: string | null };
    out.push(...page.events.map((e) => String(e.attributes['MSG'])));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

const syslogPort = (output: string) => Number(/"msg":"syslog listening","listener":"tcp","protocol":"tcp","address":"[^"]+","port":(\d+)/.exec(output)?.[1]);

describe('syslog listeners on a JetStream cluster', () => {
  it('a follower\'s listener forwards each batch to the leader, and a follower that stops writes what it received first', { timeout: 240_000 }, async () => {
    nats = await startNats(1);
    vigil = vigilCluster(nats.urls, 2, {}, {
      server: { host: '127.0.0.1', port: 0 },
      syslog: { listeners: [{ name: 'tcp', protocol: 'tcp', port: 0, messagesPerSecond: 100_000 }] },
    });
    const [a, b] = vigil.nodes as [typeof vigil.nodes[0], typeof vigil.nodes[0]];
    const pa = await a.start();
    await until(() => a.leads());
    const pb = await b.start();
    assert.equal(b.leads(), false);
    const port = syslogPort(pb.output());
    assert.ok(port > 0, 'the follower listens too');

    // util-linux logger against the follower: stored through the leader, read on both nodes.
    execFileSync(LOGGER, ['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(port), '--rfc5424', '-t', 'clusterapp', 'hello from a follower'], { stdio: 'ignore', timeout: 30_000 });
    await until(async () => (await messages(pa.url, vigil!.viewerToken)).includes('hello from a follower'));
    assert.ok((await messages(pb.url, vigil.viewerToken)).includes('hello from a follower'), 'the follower reads it (its copy follows the stream)');

    // A burst over raw TCP, then the follower is stopped at once: it writes (forwards) what it took before it exits.
    const burst = Array.from({ length: 300 }, (_, i) => `burst message ${i}`);
    await send(port, burst.map((m, i) => `<13>1 2026-11-23T10:00:00.000Z web-01 app ${i} - - ${m}\n`).join(''));
    assert.equal(await b.stop(), 0);
    assert.doesNotMatch(pb.output(), /syslog batch could not be written/);
    const stored = await messages(pa.url, vigil.viewerToken);
    for (const m of burst) assert.ok(stored.includes(m), `the leader holds "${m}" once the follower stopped`);
    assert.equal(stored.length, burst.length + 1, 'each message once');
  });
});
