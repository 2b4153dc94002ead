import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, storedEventIds, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { until } from '../helpers/vigil-cluster.js';

let cluster: NatsCluster | undefined;
after(async () => { await cluster?.stop(); });

describe('vigil serve with storage.backend "jetstream"', () => {
  it('acknowledges ingest once the stream holds it, and a node with an empty store copies the stream', { timeout: 180_000 }, async () => {
    cluster = await startNats(1);
    const dir = tempDir();
    try {
      const jetstream = { servers: cluster.urls, stream: 'E2E', replicas: 1 };
      const config = writeTestConfig(dir.path, { storage: { path: 'store-a', backend: 'jetstream', jetstream } });
      const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
      const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
      let serve = await startServe(config, dir.path);
      const ids = Array.from({ length: 30 }, (_, i) => `js-${i}`);
      try {
        const res = await fetch(`${serve.url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'js', recordId: id } }))),
        });
        assert.equal(res.status, 202, await res.text());
        assert.deepEqual([...await storedEventIds(serve.url, viewer, 'e2e')].sort(), [...ids].sort());
      } finally {
        serve.proc.kill('SIGTERM');
        assert.equal(await serve.exited, 0, serve.output());
      }
      // A second node: its own (empty) store, the same credentials and stream.
      const other = join(dir.path, 'b');
      mkdirSync(join(other, 'secrets'), { recursive: true, mode: 0o700 });
      copyFileSync(join(dir.path, 'secrets', 'credentials.json'), join(other, 'secrets', 'credentials.json'));
      // A node whose signer holds another key refuses the batches: each carries the head the leader signed.
      const stranger = join(dir.path, 'c');
      mkdirSync(join(stranger, 'secrets'), { recursive: true, mode: 0o700 });
      copyFileSync(join(dir.path, 'secrets', 'credentials.json'), join(stranger, 'secrets', 'credentials.json'));
      const configC = writeTestConfig(stranger, { storage: { path: 'store-c', backend: 'jetstream', jetstream } });
      await assert.rejects(startServe(configC, stranger), /is refused: its head is not signed by this cluster's log key/);
      // The cluster's key, which every node's signer holds (docs/scale-out.md, "Signed heads").
      const keyFile = join(dir.path, 'keys', 'log-signing.key');
      const configB = writeTestConfig(other, { log: { signer: { keyFile } }, storage: { path: 'store-b', backend: 'jetstream', jetstream } });
      serve = await startServe(configB, other);
      try {
        assert.deepEqual([...await storedEventIds(serve.url, viewer, 'e2e')].sort(), [...ids].sort());
      } finally {
        serve.proc.kill('SIGTERM');
        assert.equal(await serve.exited, 0, serve.output());
      }
      const verify = runCli(['log', 'verify', '--config', configB]);
      assert.equal(verify.status, 0, verify.stdout + verify.stderr);
    } finally {
      dir.cleanup();
    }
  });

  it('answers 503 with Retry-After while NATS is unreachable, acknowledging nothing, and takes writes again once it is back', { timeout: 180_000 }, async () => {
    const nats = await startNats(1);
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path, { storage: { path: 'store', backend: 'jetstream', jetstream: { servers: nats.urls, stream: 'OUTAGE', replicas: 1, leaseSeconds: 3 } } });
      const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
      const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
      const serve = await startServe(config, dir.path);
      const post = (ids: string[]) => fetch(`${serve.url}/api/v1/events`, {
        method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'outage', recordId: id } }))),
      });
      try {
        await nats.servers[0]!.kill();
        await until(() => /"msg":"nats disconnect"/.test(serve.output()));
        const refused = await post(['o-1']);
        assert.equal(refused.status, 503);
        assert.ok(Number(refused.headers.get('retry-after')) > 0);
        assert.match((await refused.json() as { error: string }).error, /unreachable/);
        await nats.servers[0]!.start();
        // Back: the node reconnects, wins the lease again and takes the write.
        let res: Response;
        for (;;) {
          res = await post(['o-2']);
          if (res.status !== 503) break;
          await res.arrayBuffer();
          await new Promise((r) => setTimeout(r, 200));
        }
        assert.equal(res.status, 202, await res.text());
        const ids = await storedEventIds(serve.url, viewer, 'e2e');
        assert.deepEqual([...ids], ['o-2'], 'the refused write was not stored');
      } finally {
        serve.proc.kill('SIGTERM');
        await serve.exited;
      }
    } finally {
      await nats.stop();
      dir.cleanup();
    }
  });

  it('refuses to start when the NATS servers cannot carry the largest batch', { timeout: 120_000 }, async () => {
    cluster ??= await startNats(1);
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path, { limits: { bodyBytes: 16 * 1024 * 1024 }, storage: { path: 'store', backend: 'jetstream', jetstream: { servers: cluster.urls, stream: 'BIG', replicas: 1 } } });
      await assert.rejects(startServe(config, dir.path), /max_payload/);
    } finally {
      dir.cleanup();
    }
  });

  it('checks export secrets at start on every node (not only once it leads)', { timeout: 120_000 }, async () => {
    cluster ??= await startNats(1);
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path, {
        export: { destinations: [{ name: 'hook', kind: 'webhook', url: 'https://tickets.example/hook', secretFile: `${dir.path}/missing.secret`, carries: ['alerts'] }] },
        storage: { path: 'store', backend: 'jetstream', jetstream: { servers: cluster.urls, stream: 'EXPORTS', replicas: 1 } },
      });
      await assert.rejects(startServe(config, dir.path), /export destination hook secretFile/);
    } finally {
      dir.cleanup();
    }
  });
});
