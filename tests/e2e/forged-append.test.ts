import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import { apiToken, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { makeEvent } from '../helpers/instance.js';

const mod = (path: string) => JSON.stringify(pathToFileURL(repoPath('dist', 'src', ...path.split('/'))).href);

/**
 * What an intruder who can write the store does with the shipped modules: opens the store and appends
 * a record attributed to the admin, an ingested event the API would serve as genuine. `direct` opens
 * the LMDB environment itself (the pid lock refuses `openLmdbStore` while the service runs).
 */
function forgeAppend(dir: string, storePath: string, direct: boolean): void {
  const script = join(dir, 'forge.mjs');
  const event = makeEvent({ id: 'forged-1', entityKeys: ['host:forged'] });
  writeFileSync(
    script,
    `import { openLmdbLog } from ${mod('log/lmdb-log.js')};
import { openLmdbStore } from ${mod('log/lmdb-store.js')};
import { open } from ${JSON.stringify(import.meta.resolve('lmdb'))};
const path = ${JSON.stringify(storePath)};
const store = ${direct}
  ? (() => { const root = open({ path, maxDbs: 64, compression: false, cache: false });
      return { path, root, db: (name, o) => root.openDB({ name, encoding: o?.encoding ?? 'msgpack', keyEncoding: o?.keyEncoding, cache: false }), close: () => root.close() }; })()
  : openLmdbStore(path);
const log = openLmdbLog(store);
await log.append([{ type: 'EventsIngested', at: new Date().toISOString(), actor: { id: 'admin-user', authentication: 'bearer' },
  data: { events: [${JSON.stringify(event)}] } }]);
console.log(JSON.stringify({ head: log.head().seq }));
await store.close();
`,
  );
  const r = spawnSync(process.execPath, [script], { cwd: repoPath(), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
}

async function ingest(url: string, token: string, ids: string[]): Promise<number> {
  const res = await fetch(`${url}/api/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(ids.map((id) => makeEvent({ id }))),
  });
  await res.arrayBuffer();
  return res.status;
}

async function stop(serve: ServeProcess): Promise<void> {
  serve.proc.kill('SIGTERM');
  assert.equal(await serve.exited, 0, serve.output());
}

const keeperSize = (dir: string) => (JSON.parse(readFileSync(join(dir, 'signer', 'keeper.json'), 'utf8')) as { size: number }).size;

describe('a forged append to the store', () => {
  it('on a stopped instance: verify names it, a start refuses and signs nothing, quarantine-tail sets it aside', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path, { log: { checkpointEverySeconds: 1 } });
    const ingestor = apiToken(config, 'loader', 'ingestor');
    const viewer = apiToken(config, 'auditor', 'viewer');
    const file = (name: string, text: string) => (writeFileSync(join(dir.path, name), text), join(dir.path, name));
    let serve = await startServe(config, dir.path);
    try {
      assert.equal(await ingest(serve.url, ingestor, ['real-1', 'real-2']), 202);
      await new Promise((r) => setTimeout(r, 1500));
      const published = (await (
        await fetch(`${serve.url}/api/v1/log/checkpoint`, { headers: { authorization: `Bearer ${viewer}` } })
      ).json()) as { tree_size: number; checkpoint: string };
      const key = runCli(['log', 'public-key', '--config', config]).stdout.trim();
      await stop(serve);
      const signed = keeperSize(dir.path);
      assert.equal(runCli(['log', 'verify', '--config', config]).status, 0);

      forgeAppend(dir.path, join(dir.path, 'store'), false);
      const forgedSeq = signed + 1;
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 1, verify.stdout);
      const verdict = JSON.parse(verify.stdout) as { ok: boolean; badSeq: number; reason: string };
      assert.equal(verdict.badSeq, forgedSeq);
      assert.match(verdict.reason, new RegExp(`records ${forgedSeq} to ${forgedSeq} are unattested`));

      // The next start refuses, and the signer signed nothing over the forged record.
      const refused = await startServe(config, dir.path).then(
        () => assert.fail('a store with an unattested tail was served'),
        (err: Error) => err.message,
      );
      assert.match(refused, /serve exited with 1: .*records \d+ to \d+ of the log .* past its last signed head/s);
      assert.equal(keeperSize(dir.path), signed, 'no head was signed over the forged record');

      // An auditor holding the last published checkpoint: the forged record is past what any signature covers.
      const exported = runCli(['log', 'export', '--raw', '--config', config]);
      const offline = runCli(['log', 'verify', '--export', file('export.jsonl', exported.stdout), '--checkpoint', file('cp.txt', published.checkpoint), '--key', key]);
      const audit = JSON.parse(offline.stdout) as { size: number; beyond: number };
      assert.ok(audit.size < forgedSeq && audit.beyond >= forgedSeq - audit.size, offline.stdout);

      // The operator sets it aside: the file keeps it, the log says so, and the service serves again without it.
      const moved = runCli(['log', 'quarantine-tail', '--reason', 'not written by vigil', '--config', config]);
      assert.equal(moved.status, 0, moved.stderr);
      const q = JSON.parse(moved.stdout) as { quarantined: number; fromSeq: number; file: string; digest: string };
      assert.deepEqual([q.quarantined, q.fromSeq], [1, forgedSeq]);
      assert.equal(statSync(q.file).mode & 0o777, 0o600);
      assert.match(readFileSync(q.file, 'utf8'), /forged-1/);
      assert.equal(runCli(['log', 'verify', '--config', config]).status, 0);
      serve = await startServe(config, dir.path);
      const events = (await (
        await fetch(`${serve.url}/api/v1/events?limit=1000`, { headers: { authorization: `Bearer ${viewer}` } })
      ).json()) as { events: Array<{ id: string }> };
      assert.ok(events.events.some((e) => e.id === 'real-1'));
      assert.ok(!events.events.some((e) => e.id === 'forged-1'), 'the forged event is not served');
      await new Promise((r) => setTimeout(r, 1500));
      const after = (await (
        await fetch(`${serve.url}/api/v1/log/checkpoint`, { headers: { authorization: `Bearer ${viewer}` } })
      ).json()) as { tree_size: number; checkpoint: string };
      const consistent = runCli(['log', 'verify-consistency', file('old.txt', published.checkpoint), file('new.txt', after.checkpoint), '--key', key, '--url', serve.url], { env: { VIGIL_TOKEN: viewer } });
      assert.equal(consistent.status, 0, consistent.stdout + consistent.stderr);
      await stop(serve);
      const lines = runCli(['log', 'export', '--config', config]).stdout.trim().split('\n');
      const recorded = lines.map((l) => JSON.parse(l) as { type: string; data: { fromSeq?: number; digest?: string } });
      const entry = recorded.find((r) => r.type === 'LogTailQuarantined');
      assert.deepEqual([entry?.data.fromSeq, entry?.data.digest], [forgedSeq, q.digest]);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });

  it('on a running instance: the writer stops rather than write after it, and the next start refuses it', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const ingestor = apiToken(config, 'loader', 'ingestor');
    const serve = await startServe(config, dir.path);
    try {
      assert.equal(await ingest(serve.url, ingestor, ['real-1']), 202);
      forgeAppend(dir.path, join(dir.path, 'store'), true);
      // An auditor's verify beside the running service names the forged record.
      const live = runCli(['log', 'verify', '--config', config]);
      assert.equal(live.status, 1, live.stdout + live.stderr);
      assert.match(live.stdout, /"reason":"records (\d+) to \1 are unattested/);
      // The service's next commit would chain behind a record it did not write: the outcome is refused, fatally.
      assert.equal(await ingest(serve.url, ingestor, ['real-2']), 503);
      assert.equal(await serve.exited, 70);
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 1);
      assert.match(verify.stdout, /unattested/);
      await assert.rejects(startServe(config, dir.path), /past its last signed head/);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });
});
