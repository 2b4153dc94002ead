import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

type AlertJson = { id: string; status: string; title: string; reviewHistory: Array<{ principal: string; to: string }> };

/** Polls `probe` until it returns a value (bounded by attempts, not by a timed assertion). */
async function until<T>(probe: () => Promise<T | undefined>, what: string, attempts = 600): Promise<T> {
  for (let i = 0; i < attempts; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`gave up waiting: ${what}`);
}

describe('vigil serve watching a source that stops', () => {
  it('raises a source-silent alert from its scheduler, resolves it when the source reports again, and replays to the same alerts after a restart', async () => {
    const dir = tempDir();
    // Seconds, not minutes: the smallest thresholds the configuration allows.
    const config = writeTestConfig(dir.path, { monitoring: { checkSeconds: 1, silence: { floorSeconds: 1, ceilingSeconds: 2, multiplier: 1 } } });
    const token = (JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string }).token;
    const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    const post = (url: string, id: string) => fetch(`${url}/api/v1/events`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify([makeEvent({ id, source: { adapter: 'syslog', instance: 'gateway', recordId: id } })]),
    });
    const alerts = async (url: string) => ((await (await fetch(`${url}/api/v1/alerts?rule=vigil.source-silent`, { headers: { authorization: `Bearer ${viewer}` } })).json()) as { alerts: AlertJson[] }).alerts;
    let serve = await startServe(config, dir.path);
    try {
      assert.equal((await post(serve.url, 'g-1')).status, 202);
      const raised = await until(async () => (await alerts(serve.url)).find((a) => a.status === 'open'), 'the silence alert');
      assert.match(raised.title, /Source went silent: syslog\/gateway/);
      assert.equal((await post(serve.url, 'g-2')).status, 202);
      const resolved = await until(async () => {
        const a = await (await fetch(`${serve.url}/api/v1/alerts/${raised.id}`, { headers: { authorization: `Bearer ${viewer}` } })).json() as AlertJson;
        return a.status === 'dismissed' ? a : undefined;
      }, 'the silence alert resolved');
      assert.deepEqual(resolved.reviewHistory.map((h) => [h.principal, h.to]), [['vigil.source-silent', 'dismissed']]);
      const before = JSON.stringify((await alerts(serve.url)).find((x) => x.id === raised.id));
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0, serve.output());

      const replayed = runCli(['replay', '--config', config]);
      assert.equal(replayed.status, 0, replayed.stderr);
      const byType = (JSON.parse(replayed.stdout) as { recordsByType: Record<string, number> }).recordsByType;
      assert.ok((byType.SourceWentSilent ?? 0) >= 1 && (byType.SourceResumed ?? 0) >= 1, JSON.stringify(byType));
      serve = await startServe(config, dir.path);
      const after = (await alerts(serve.url)).find((x) => x.id === raised.id);
      assert.equal(JSON.stringify(after), before, 'the replayed alert is the live one');
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });
});
