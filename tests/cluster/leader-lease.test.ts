import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from '@nats-io/transport-node';
import { startLeaderLease, type LeaderLease } from '../../src/cli/cluster/leader-lease.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';

let cluster: Promise<NatsCluster> | undefined;
const nats = () => (cluster ??= startNats(1));
after(async () => { if (cluster) await (await cluster).stop(); });

/** Polls until `done` holds (the test's own timeout bounds it). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((r) => setTimeout(r, 50));
}

let buckets = 0;

describe('leader lease', () => {
  it('names one holder; the other takes over once the holder releases it', { timeout: 60_000 }, async () => {
    const { urls } = await nats();
    const nc = await connect({ servers: [...urls] });
    const bucket = `lease_${++buckets}`;
    const events: string[] = [];
    const lease = (node: string) => startLeaderLease({
      nc, bucket, node, ttlMs: 3000, replicas: 1, log: () => undefined,
      onAcquired: async () => { events.push(`${node} won`); },
      onLost: (reason) => events.push(`${node} lost: ${reason}`),
    });
    let a: LeaderLease | undefined;
    let b: LeaderLease | undefined;
    try {
      a = await lease('a');
      b = await lease('b');
      assert.equal(a.held(), true);
      assert.equal(b.held(), false);
      assert.equal(b.leader(), 'a');
      await a.stop();
      await until(() => b!.held());
      assert.deepEqual(events, ['a won', 'b won']);
    } finally {
      await a?.stop();
      await b?.stop();
      await nc.close();
    }
  });

  it('lets a holder that was not heard from lose the lease to another node, and tells it so', { timeout: 60_000 }, async () => {
    const { urls } = await nats();
    const ncA = await connect({ servers: [...urls] });
    const ncB = await connect({ servers: [...urls] });
    const bucket = `lease_${++buckets}`;
    const lost: string[] = [];
    let b: LeaderLease | undefined;
    const a = await startLeaderLease({
      nc: ncA, bucket, node: 'a', ttlMs: 3000, replicas: 1, log: () => undefined,
      onAcquired: async () => {}, onLost: (reason) => lost.push(reason),
    });
    try {
      assert.equal(a.held(), true);
      // A partition: a's connection goes away without releasing; the entry expires on the server.
      await ncA.close();
      b = await startLeaderLease({ nc: ncB, bucket, node: 'b', ttlMs: 3000, replicas: 1, log: () => undefined, onAcquired: async () => {}, onLost: () => undefined });
      await until(() => b!.held());
      await until(() => !a.held());
      await until(() => lost.length > 0);
      assert.match(lost[0]!, /not renewed|another node/);
    } finally {
      await a.stop();
      await b?.stop();
      await ncB.close();
    }
  });
});
