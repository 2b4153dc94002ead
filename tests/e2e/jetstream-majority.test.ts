import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { listedEventIds, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { startNats } from '../helpers/nats.js';

/** A read, retried while the node answers 503 (it cannot yet confirm it holds the stream's head), as a client would. */
async function patientGet(url: string, viewer: string): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${viewer}` } });
    if (res.status !== 503 || attempt >= 60) return res;
    await res.arrayBuffer();
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Starts the node as systemd (Restart=always) would: again after a refusal, which must say what is wrong. */
async function startLikeSystemd(config: string, cwd: string): Promise<ServeProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServe(config, cwd);
    } catch (err) {
      const message = (err as Error).message;
      assert.doesNotMatch(message, /unexpected error/, 'a refusal at start says what is wrong');
      if (attempt >= 40) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

// The failure table's "two NATS servers of three die" row (docs/scale-out.md): with no majority
// nothing may be acknowledged; the node answers 503 (or stops, as on any unknown outcome, for
// systemd to restart); once the servers are back, writes go on and nothing is stored twice.
describe('a JetStream R3 stream that loses its majority', () => {
  it('acknowledges nothing while two of three NATS servers are down, then takes writes again, nothing stored twice', { timeout: 240_000 }, async (t) => {
    const nats = await startNats(3);
    const dir = tempDir();
    let serve: ServeProcess | undefined;
    try {
      const config = writeTestConfig(dir.path, { storage: { path: 'store', backend: 'jetstream', jetstream: { servers: nats.urls, stream: 'MAJORITY', replicas: 3, leaseSeconds: 3, publishTimeoutSeconds: 2 } } });
      const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
      const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
      serve = await startServe(config, dir.path);
      const post = (url: string, ids: string[]) => fetch(`${url}/api/v1/events`, {
        method: 'POST', signal: AbortSignal.timeout(60_000), headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'majority', recordId: id } }))),
      });
      const before = await post(serve.url, ['m-a1', 'm-a2']);
      assert.equal(before.status, 202, await before.text());

      await nats.servers[1]!.kill();
      await nats.servers[2]!.kill();
      // Without a majority the stream cannot take the batch: 503 (retry), or the node stops.
      const during = await post(serve.url, ['m-b1']).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text() }), (err: Error) => ({ status: 0, retryAfter: null, body: err.message }));
      t.diagnostic(`while two servers were down: ${during.status} ${during.body.slice(0, 200)}`);
      assert.notEqual(during.status, 202, 'nothing is acknowledged without a majority');
      if (during.status !== 0) {
        assert.equal(during.status, 503, during.body);
        assert.ok(Number(during.retryAfter) > 0, 'a 503 says when to retry');
      }

      await nats.servers[1]!.start();
      await nats.servers[2]!.start();
      // The node either rode it out or stopped itself (exit status of a storage failure); systemd would start it again.
      const stopped = await Promise.race([serve.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 100))]);
      if (stopped) {
        t.diagnostic('the node stopped itself; started again as systemd would');
        serve = await startLikeSystemd(config, dir.path);
      }
      let after: Response;
      for (;;) {
        after = await post(serve.url, ['m-c1']).catch(() => new Response(null, { status: 599 }));
        if (after.status === 202) break;
        await after.arrayBuffer();
        if (serve.proc.exitCode !== null) serve = await startLikeSystemd(config, dir.path);
        await new Promise((r) => setTimeout(r, 250));
      }
      // Read back; a node that stopped itself meanwhile (the cluster still settling) is started again, as systemd would.
      let ids: string[];
      for (let attempt = 1; ; attempt++) {
        try {
          ids = await listedEventIds(serve.url, viewer, 'e2e', (u) => patientGet(u, viewer));
          break;
        } catch (err) {
          // A node stopping itself closes its listener before it exits: a refused read waits for the exit.
          const exited = serve.proc.exitCode !== null || await Promise.race([serve.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]);
          if (attempt >= 5 || !exited) throw err;
          serve = await startLikeSystemd(config, dir.path);
        }
      }
      const count = (id: string) => ids.filter((x) => x === id).length;
      assert.equal(count('m-a1'), 1);
      assert.equal(count('m-a2'), 1);
      assert.equal(count('m-c1'), 1);
      assert.ok(count('m-b1') <= 1, 'the unacknowledged batch is stored at most once');
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0, serve.output().slice(-2000));
      serve = undefined;
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout + verify.stderr);
    } finally {
      if (serve) { serve.proc.kill('SIGKILL'); await serve.exited; }
      await nats.stop();
      dir.cleanup();
    }
  });
});
