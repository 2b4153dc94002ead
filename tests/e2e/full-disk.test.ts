import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, storedEventIds, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

const MiB = 1024 * 1024;

/**
 * Mounts a tmpfs of `mib` MiB at `path` and returns how to resize and unmount it, or why it cannot
 * (mounting needs root, as in CI; elsewhere the test says so and checks nothing).
 */
function mountTmpfs(path: string, mib: number): { resize(mib: number): void; unmount(): void } | string {
  if (process.getuid?.() !== 0) return `not running as root (uid ${process.getuid?.()}): cannot mount a tmpfs for the store`;
  mkdirSync(path, { recursive: true });
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m,mode=0700`, 'tmpfs', path], { encoding: 'utf8' });
  if (m.status !== 0) return `mount -t tmpfs failed (${m.status}): ${m.stderr.trim() || m.error?.message}`;
  return {
    resize(size) {
      const r = spawnSync('mount', ['-o', `remount,size=${size}m`, path], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
    },
    unmount() {
      spawnSync('umount', ['-l', path]);
    },
  };
}

/** Ingest workers until the server stops answering; returns every acknowledged id and the statuses seen. */
async function fillUntilStopped(url: string, token: string, exited: Promise<unknown>): Promise<{ acknowledged: string[]; statuses: Map<number, number>; unknownOutcome: string[]; dropped: number }> {
  const acknowledged: string[] = [];
  const statuses = new Map<number, number>();
  const unknownOutcome: string[] = [];
  let dropped = 0;
  let gone = false;
  void exited.then(() => { gone = true; });
  const padding = 'x'.repeat(2000);
  await Promise.all(Array.from({ length: 4 }, async (_, w) => {
    for (let b = 0; !gone && b < 20_000; b++) {
      const ids = Array.from({ length: 20 }, (_, i) => `fd-${w}-${b}-${i}`);
      try {
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'full-disk', recordId: id }, attributes: { padding } }))),
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const text = await res.text();
        if (res.status === 202) acknowledged.push(...ids);
        if (res.status === 503) unknownOutcome.push(text);
      } catch {
        dropped++;
        if (gone) return;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }));
  return { acknowledged, statuses, unknownOutcome, dropped };
}

function skipWhy(t: TestContext, why: string): void {
  // Said in the test's output: this environment cannot run the real full-disk case.
  t.diagnostic(`REAL FULL DISK NOT TESTED: ${why}`);
  process.stderr.write(`full-disk test: ${why}\n`);
}

describe('vigil serve with its store on a small filesystem that fills up', () => {
  it('refuses writes past the flood mark on the real disk and writes again by itself once space returns', async (t) => {
    const dir = tempDir();
    const fs = mountTmpfs(join(dir.path, 'fs'), 48);
    if (typeof fs === 'string') { skipWhy(t, fs); dir.cleanup(); return; }
    try {
      const config = writeTestConfig(dir.path, { storage: { path: 'fs/store' }, monitoring: { checkSeconds: 1, disk: { lowFreeBytes: 16 * MiB, lowFreePercent: 0, floodFreeBytes: 8 * MiB, floodFreePercent: 0 } } });
      const token = (JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string }).token;
      const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
      const serve = await startServe(config, dir.path);
      try {
        const post = (id: string) => fetch(`${serve.url}/api/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify([makeEvent({ id, source: { adapter: 'e2e', instance: 'ballast', recordId: id } })]) });
        assert.equal((await post('before')).status, 202);
        // Ballast leaves the store's filesystem under the flood mark (8 MiB free) but not full.
        writeFileSync(join(dir.path, 'fs', 'ballast'), Buffer.alloc(0));
        const free = () => { const r = spawnSync('df', ['-B1', '--output=avail', join(dir.path, 'fs')], { encoding: 'utf8' }); return Number(r.stdout.trim().split('\n').pop()); };
        writeFileSync(join(dir.path, 'fs', 'ballast'), Buffer.alloc(Math.max(0, free() - 4 * MiB)));
        let refused: Response | undefined;
        // The monitor samples the filesystem at most once a second: keep writing, a little apart, until it has seen the ballast.
        for (let i = 0; i < 300 && refused?.status !== 507; i++) { refused = await post(`flood-${i}`); await refused.text(); if (refused.status !== 507) await new Promise((r) => setTimeout(r, 50)); }
        assert.equal(refused!.status, 507);
        assert.ok(refused!.headers.get('retry-after'));
        const reads = await fetch(`${serve.url}/api/v1/events?limit=5`, { headers: { authorization: `Bearer ${viewer}` } });
        assert.equal(reads.status, 200);
        await reads.text();
        assert.deepEqual(await (await fetch(`${serve.url}/health`)).json(), { status: 'degraded' });
        rmSync(join(dir.path, 'fs', 'ballast'));
        let accepted: Response | undefined;
        for (let i = 0; i < 600 && accepted?.status !== 202; i++) {
          accepted = await post(`after-${i}`);
          await accepted.text();
          if (accepted.status !== 202) await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(accepted!.status, 202, 'writing resumed by itself');
        serve.proc.kill('SIGTERM');
        assert.equal(await serve.exited, 0, serve.output());
      } finally {
        serve.proc.kill('SIGKILL');
        await serve.exited;
      }
    } finally {
      fs.unmount();
      dir.cleanup();
    }
  });

  it('with no watermarks: answers the requests in flight when the disk is full, stops, loses no acknowledged event, verifies, and restarts once space returns', async (t) => {
    const dir = tempDir();
    const fs = mountTmpfs(join(dir.path, 'fs'), 24);
    if (typeof fs === 'string') { skipWhy(t, fs); dir.cleanup(); return; }
    try {
      const noMarks = { lowFreeBytes: 0, lowFreePercent: 0, floodFreeBytes: 0, floodFreePercent: 0 };
      const config = writeTestConfig(dir.path, { storage: { path: 'fs/store' }, monitoring: { disk: noMarks } });
      const token = (JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string }).token;
      const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
      let serve = await startServe(config, dir.path);
      const load = await fillUntilStopped(serve.url, token, serve.exited);
      const code = await serve.exited;
      t.diagnostic(`statuses ${JSON.stringify([...load.statuses])}, ${load.dropped} connection errors, ${load.acknowledged.length} events acknowledged`);
      assert.equal(code, 70, `the process stops as before on a storage failure\n${serve.output().slice(-3000)}`);
      assert.match(serve.output(), /storage failure: answering requests in flight with 503, then stopping/);
      assert.ok(load.acknowledged.length > 0, 'some batches were acknowledged before the disk filled');
      assert.ok(load.unknownOutcome.length > 0, `the requests in flight were answered 503 (statuses ${JSON.stringify([...load.statuses])}, ${load.dropped} dropped)`);
      for (const body of load.unknownOutcome) assert.match(body, /outcome of this request is unknown.*retrying with the same event ids/);

      fs.resize(96);
      const roomy = { lowFreeBytes: 4 * MiB, lowFreePercent: 0, floodFreeBytes: MiB, floodFreePercent: 0 };
      writeTestConfig(dir.path, { storage: { path: 'fs/store' }, monitoring: { disk: roomy } });
      serve = await startServe(config, dir.path);
      try {
        const seen = await storedEventIds(serve.url, viewer, 'e2e');
        const missing = load.acknowledged.filter((id) => !seen.has(id));
        assert.deepEqual(missing.slice(0, 5), [], `${missing.length} of ${load.acknowledged.length} acknowledged events lost`);
        const again = await fetch(`${serve.url}/api/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify([makeEvent({ id: 'after-restart', source: { adapter: 'e2e', instance: 'full-disk', recordId: 'r' } })]) });
        assert.equal(again.status, 202, await again.text());
        serve.proc.kill('SIGTERM');
        assert.equal(await serve.exited, 0, serve.output());
      } finally {
        serve.proc.kill('SIGKILL');
        await serve.exited;
      }
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout + verify.stderr);
      assert.equal((JSON.parse(verify.stdout) as { ok: boolean }).ok, true);
    } finally {
      fs.unmount();
      dir.cleanup();
    }
  });

  it('says in one line that the disk is full when it cannot start, and what to do', async (t) => {
    const dir = tempDir();
    const fs = mountTmpfs(join(dir.path, 'fs'), 1);
    if (typeof fs === 'string') { skipWhy(t, fs); dir.cleanup(); return; }
    try {
      const config = writeTestConfig(dir.path, { storage: { path: 'fs/store' } });
      writeFileSync(join(dir.path, 'fs', 'ballast'), Buffer.alloc(MiB));
      const refused = runCli(['serve', '--config', config]);
      assert.equal(refused.status, 1, refused.stdout + refused.stderr);
      const lines = refused.stderr.trim().split('\n');
      assert.equal(lines.length, 1, refused.stderr);
      assert.match(lines[0]!, /^vigil: the disk holding the store .*fs\/store is full \(no space left on device\): free space there/);
      assert.doesNotMatch(refused.stderr, /unexpected error/);
    } finally {
      fs.unmount();
      dir.cleanup();
    }
  });
});
