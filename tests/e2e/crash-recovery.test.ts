import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, storedEventIds, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Workers posting batches of events until stopped or the server goes away; `stop()` resolves with
 * the ids of every event the server acknowledged (202).
 */
function sustainedLoad(url: string, token: string, o: { workers: number; batch: number; prefix: string; instance: string }): { acknowledged(): number; stop(): Promise<string[]> } {
  const acknowledged: string[] = [];
  let stopped = false;
  const workers = Array.from({ length: o.workers }, async (_, w) => {
    for (let b = 0; !stopped && b < 10_000; b++) {
      const ids = Array.from({ length: o.batch }, (_, i) => `${o.prefix}${w}-b${b}-e${i}`);
      try {
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: o.instance, recordId: id } }))),
        });
        if (res.status === 202) acknowledged.push(...ids);
        else await res.text();
      } catch {
        return; // the server went away: this request was never acknowledged
      }
    }
  });
  return {
    acknowledged: () => acknowledged.length,
    async stop() {
      stopped = true;
      await Promise.all(workers);
      return acknowledged;
    },
  };
}

describe('vigil serve under kill -9', () => {
  it('keeps every acknowledged event and a verifiable log across a crash during sustained ingestion', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
    const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    let serve = await startServe(config, dir.path);
    try {
      const load = sustainedLoad(serve.url, token, { workers: 4, batch: 50, prefix: 'w', instance: 'crash' });
      // Kill once the load is well under way, however long that takes on a loaded machine.
      for (let i = 0; i < 1200 && load.acknowledged() <= 500; i++) await new Promise((r) => setTimeout(r, 100));
      serve.proc.kill('SIGKILL');
      await serve.exited;
      const acknowledged = await load.stop();
      assert.ok(acknowledged.length > 500, `sustained ingestion acknowledged only ${acknowledged.length} events`);

      serve = await startServe(config, dir.path);
      const seen = await storedEventIds(serve.url, viewer, 'e2e');
      const missing = acknowledged.filter((id) => !seen.has(id));
      assert.deepEqual(missing.slice(0, 5), [], `${missing.length} acknowledged events lost`);
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout + verify.stderr);
      assert.equal((JSON.parse(verify.stdout) as { ok: boolean }).ok, true);
      const replayed = JSON.parse(runCli(['replay', '--config', config]).stdout) as { records: number; recordsByType: Record<string, number> };
      assert.ok(replayed.recordsByType.EventsIngested! * 50 >= acknowledged.length);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });

  it('keeps every acknowledged event when SIGTERM arrives during sustained ingestion, and exits cleanly', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
    const serve = await startServe(config, dir.path);
    try {
      const load = sustainedLoad(serve.url, token, { workers: 3, batch: 20, prefix: 't', instance: 'term' });
      await new Promise((r) => setTimeout(r, 800));
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0, serve.output());
      const acknowledged = await load.stop();
      assert.ok(acknowledged.length > 100, `only ${acknowledged.length} acknowledged`);
      const exported = runCli(['log', 'export', '--config', config]).stdout.trim().split('\n')
        .map((l) => JSON.parse(l) as { type: string; data: { events?: Array<{ id: string }> } });
      const stored = new Set(exported.filter((r) => r.type === 'EventsIngested').flatMap((r) => r.data.events!.map((e) => e.id)));
      assert.deepEqual(acknowledged.filter((id) => !stored.has(id)).slice(0, 5), []);
      assert.equal(JSON.parse(runCli(['log', 'verify', '--config', config]).stdout).ok, true);
    } finally {
      serve.proc.kill('SIGKILL');
      dir.cleanup();
    }
  });

  it('stops as on SIGTERM, then with status 70 and a fatal line, on an error nothing caught during sustained ingestion, keeping every acknowledged event', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
    const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    // The bug is the test's own: a module loaded before Vigil throws from a callback on SIGUSR2,
    // as any unexpected error in a timer or an event handler would.
    const bug = join(dir.path, 'bug.mjs');
    writeFileSync(bug, "process.on('SIGUSR2', () => setImmediate(() => { throw new Error('a bug the test put there'); }));\n");
    let serve = await startServe(config, dir.path, [], { NODE_OPTIONS: `--import=${bug}` });
    try {
      const load = sustainedLoad(serve.url, token, { workers: 4, batch: 50, prefix: 'u', instance: 'bug' });
      for (let i = 0; i < 1200 && load.acknowledged() <= 500; i++) await new Promise((r) => setTimeout(r, 100));
      serve.proc.kill('SIGUSR2');
      const code = await Promise.race([serve.exited, new Promise<string>((r) => setTimeout(() => r('still running after 30 s'), 30_000).unref())]);
      assert.equal(code, 70, serve.output().slice(-2000));
      assert.equal(serve.proc.signalCode, null, 'the exit did not abort');
      assert.match(serve.output(), /"level":"fatal","msg":"unexpected error: stopping as on SIGTERM, then exiting with status 70 \(please report this line\)","error":"a bug the test put there"/);
      const acknowledged = await load.stop();

      serve = await startServe(config, dir.path);
      const seen = await storedEventIds(serve.url, viewer, 'e2e');
      assert.deepEqual(acknowledged.filter((id) => !seen.has(id)).slice(0, 5), []);
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
      assert.equal(JSON.parse(runCli(['log', 'verify', '--config', config]).stdout).ok, true);
    } finally {
      serve.proc.kill('SIGKILL');
      dir.cleanup();
    }
  });

  it('refuses a second serve on the same store with a clear message, while log verify reads it beside the first', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const serve = await startServe(config, dir.path);
    try {
      const second = runCli(['serve', '--config', config]);
      assert.equal(second.status, 1);
      assert.match(second.stderr, /is in use by process \d+; stop it first/);
      // An auditor only reads (issue 58): it is not a second writer.
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stderr);
      assert.equal((JSON.parse(verify.stdout) as { ok: boolean }).ok, true);
    } finally {
      serve.proc.kill('SIGTERM');
      await serve.exited;
      dir.cleanup();
    }
  });
});
