import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync } from 'node:fs';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

/** Polls `probe` until it returns true (bounded by attempts, not by a timed assertion). */
async function until(probe: () => Promise<boolean>, what: string, attempts = 600): Promise<void> {
  for (let i = 0; i < attempts; i++) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`gave up waiting: ${what}`);
}

const post = (url: string, token: string, id: string) => fetch(`${url}/api/v1/events`, {
  method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  body: JSON.stringify([makeEvent({ id, source: { adapter: 'e2e', instance: 'watermarks', recordId: id } })]),
});

describe('vigil serve with disk watermarks crossed by configuration', () => {
  it('answers ingest 507 with Retry-After while reads and /health go on, and accepts ingest again after a SIGHUP reload lowers the marks', async () => {
    const dir = tempDir();
    // Marks far above any real free space: the store's disk is past both at once.
    const above = { lowFreeBytes: 2 ** 52, lowFreePercent: 0, floodFreeBytes: 2 ** 52, floodFreePercent: 0, retryAfterSeconds: 7 };
    const config = writeTestConfig(dir.path, { monitoring: { checkSeconds: 1, disk: above } });
    const token = (JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string }).token;
    const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    const admin = (JSON.parse(runCli(['api-token-generate', 'operator', 'admin', '--config', config]).stdout) as { token: string }).token;
    const serve = await startServe(config, dir.path);
    try {
      const refused = await post(serve.url, token, 'wm-1');
      assert.equal(refused.status, 507);
      assert.equal(refused.headers.get('retry-after'), '7');
      assert.match((await refused.json() as { error: string }).error, /flood mark/);
      const reads = await fetch(`${serve.url}/api/v1/events?limit=5`, { headers: { authorization: `Bearer ${viewer}` } });
      assert.equal(reads.status, 200);
      await reads.text();
      assert.deepEqual(await (await fetch(`${serve.url}/health`)).json(), { status: 'degraded' });
      const detail = await (await fetch(`${serve.url}/api/v1/health`, { headers: { authorization: `Bearer ${admin}` } })).json() as { components: { disk: { status: string; writesRefused: boolean; freeBytes: number } } };
      assert.equal(detail.components.disk.status, 'flood');
      assert.equal(detail.components.disk.writesRefused, true);
      assert.ok(detail.components.disk.freeBytes > 0, 'the real free space of the store\'s filesystem');
      await until(async () => {
        const alerts = await (await fetch(`${serve.url}/api/v1/alerts?rule=vigil.disk-low`, { headers: { authorization: `Bearer ${viewer}` } })).json() as { alerts: Array<{ status: string }> };
        return alerts.alerts.length === 1 && alerts.alerts[0]!.status === 'open';
      }, 'the disk alert raised by the scheduled check');

      // Lower the marks in the config file and tell the process: no restart.
      const raw = JSON.parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
      writeFileSync(config, JSON.stringify({ ...raw, monitoring: { checkSeconds: 1, disk: { lowFreeBytes: 1024 * 1024, lowFreePercent: 0, floodFreeBytes: 1024, floodFreePercent: 0 } } }));
      serve.proc.kill('SIGHUP');
      await until(async () => ((await (await fetch(`${serve.url}/health`)).json()) as { status: string }).status === 'ok', '/health ok after the reload');
      const accepted = await post(serve.url, token, 'wm-2');
      assert.equal(accepted.status, 202, await accepted.text());
      await until(async () => {
        const alerts = await (await fetch(`${serve.url}/api/v1/alerts?rule=vigil.disk-low`, { headers: { authorization: `Bearer ${viewer}` } })).json() as { alerts: Array<{ status: string }> };
        return alerts.alerts[0]?.status === 'dismissed';
      }, 'the disk alert resolved by itself');
      assert.match(serve.output(), /monitoring settings reloaded/);

      // A config that no longer validates is reported, and the settings in force are kept.
      writeFileSync(config, JSON.stringify({ ...raw, monitoring: { disk: { lowFreePercent: 500 } } }));
      serve.proc.kill('SIGHUP');
      await until(async () => /config reload failed: keeping the settings in force/.test(serve.output()), 'the refused reload reported');
      assert.equal((await post(serve.url, token, 'wm-3')).status, 202);
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0, serve.output());
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });
});
