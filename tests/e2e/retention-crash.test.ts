import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, storedEventIds, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

/** Workers posting small batches until stopped or the server goes away; `stop()` resolves with the acknowledged ids. */
function load(url: string, token: string, prefix: string): { acknowledged(): number; stop(): Promise<string[]> } {
  const acknowledged: string[] = [];
  let stopped = false;
  const workers = Array.from({ length: 3 }, async (_, w) => {
    for (let b = 0; !stopped && b < 100_000; b++) {
      const ids = Array.from({ length: 5 }, (_, i) => `${prefix}${w}-b${b}-e${i}`);
      try {
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(ids.map((id) => makeEvent({ id, source: { adapter: 'e2e', instance: 'retention', recordId: id } }))),
        });
        if (res.status === 202) acknowledged.push(...ids);
        else await res.text();
      } catch {
        return;
      }
    }
  });
  return { acknowledged: () => acknowledged.length, async stop() { stopped = true; await Promise.all(workers); return acknowledged; } };
}

/** Event ids held by the archive files (EventsIngested records). */
function archivedIds(dir: string): Set<string> {
  const ids = new Set<string>();
  if (!existsSync(dir)) return ids;
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.jsonl'))) {
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n').slice(1)) {
      if (!line) continue;
      const r = JSON.parse(line) as { type: string; data: { events?: Array<{ id: string }> } };
      if (r.type === 'EventsIngested') for (const e of r.data.events ?? []) ids.add(e.id);
    }
  }
  return ids;
}

const archives = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.jsonl')).length : 0);

describe('retention under kill -9', () => {
  it('leaves the old state or the new one, never a gap, when vigil serve is killed while segments expire', async () => {
    const dir = tempDir();
    // Evidence expires as soon as its segment is whole; everything else is carried forward.
    const config = writeTestConfig(dir.path, { retention: { enabled: true, evidenceDays: 0, segmentRecords: 256, checkSeconds: 1 } });
    const archiveDir = join(dir.path, 'store', 'archive');
    const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
    const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    const acknowledged: string[] = [];
    const outcomes: Array<{ from: number; archives: number; files: number }> = [];
    try {
      for (let round = 0; round < 4; round++) {
        const serve = await startServe(config, dir.path);
        const l = load(serve.url, token, `r${round}-`);
        // Kill right after an archive appears (rounds 0 and 1: an expiry is under way, its cut most
        // likely not committed, as it archives every due segment first), or right after a cut was
        // committed (rounds 2 and 3: the next expiry run may be under way).
        const before = archives(archiveDir);
        const cutCommitted = () => serve.output().includes('"msg":"log segment expired"');
        for (let i = 0; i < 1200 && (round < 2 ? archives(archiveDir) <= before : !cutCommitted()); i++) await new Promise((r) => setTimeout(r, 25));
        await new Promise((r) => setTimeout(r, 15 * round));
        serve.proc.kill('SIGKILL');
        await serve.exited;
        acknowledged.push(...await l.stop());
        assert.ok(archives(archiveDir) > before, `round ${round}: no segment expired (${serve.output().slice(-2000)})`);

        const fromCut = runCli(['log', 'verify', '--config', config]);
        assert.equal(fromCut.status, 0, `round ${round}: ${fromCut.stdout}${fromCut.stderr}`);
        const whole = runCli(['log', 'verify', '--archives', archiveDir, '--config', config]);
        assert.equal(whole.status, 0, `round ${round}: ${whole.stdout}${whole.stderr}`);
        const v = JSON.parse(whole.stdout) as { from?: number; history: { records: number; archives: number } };
        // Killed before the cut committed, the live store is whole (an archive may lie there unnamed);
        // after it, the live store starts at the cut and the named archives hold everything before.
        assert.equal(v.from ?? 1, v.history.archives === 0 ? 1 : Number(v.from));
        outcomes.push({ from: v.from ?? 1, archives: v.history.archives, files: archives(archiveDir) });
      }
      assert.ok(outcomes.at(-1)!.from > 1, `no cut was ever committed: ${JSON.stringify(outcomes)}`);
      const serve = await startServe(config, dir.path);
      const live = await storedEventIds(serve.url, viewer, 'e2e');
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
      const archived = archivedIds(archiveDir);
      const lost = acknowledged.filter((id) => !live.has(id) && !archived.has(id));
      assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${acknowledged.length} acknowledged events are neither live nor archived`);
      assert.ok(archived.size > 0 && live.size > 0);
    } finally {
      dir.cleanup();
    }
  });
});
