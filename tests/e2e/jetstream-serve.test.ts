import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, storedEventIds, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';

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
      const configB = writeTestConfig(other, { storage: { path: 'store-b', backend: 'jetstream', jetstream } });
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
});
