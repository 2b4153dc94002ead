import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

interface CheckpointJson { tree_size: number; root_hash: string; key: string; checkpoint: string }

async function ingestFor(url: string, token: string, ms: number, prefix: string): Promise<number> {
  const until = Date.now() + ms;
  let sent = 0;
  const worker = async (w: number) => {
    for (let b = 0; Date.now() < until; b++) {
      const ids = Array.from({ length: 20 }, (_, i) => `${prefix}${w}-${b}-${i}`);
      try {
        const res = await fetch(`${url}/api/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(ids.map((id) => makeEvent({ id }))) });
        await res.text();
        sent++;
      } catch {
        return;
      }
    }
  };
  await Promise.all([0, 1, 2].map(worker));
  return sent;
}

describe('signed checkpoints end to end', () => {
  it('after kill -9 while checkpointing, the next start publishes a checkpoint consistent with the last one; an outsider verifies offline', async () => {
    const dir = tempDir();
    // A checkpoint after every commit: under load one is nearly always being made, so the kills below land in one.
    const config = writeTestConfig(dir.path, { log: { checkpointEveryRecords: 1, checkpointEverySeconds: 1 } });
    const ingestor = (JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string }).token;
    const viewer = (JSON.parse(runCli(['api-token-generate', 'auditor', 'viewer', '--config', config]).stdout) as { token: string }).token;
    let serve = await startServe(config, dir.path);
    const get = async <T>(path: string): Promise<T> => {
      const res = await fetch(`${serve.url}${path}`, { headers: { authorization: `Bearer ${viewer}` } });
      assert.equal(res.status, 200, `${path}: ${res.status}`);
      return await res.json() as T;
    };
    const file = (name: string, content: string) => { writeFileSync(join(dir.path, name), content); return join(dir.path, name); };
    try {
      const key = runCli(['log', 'public-key', '--config', config]).stdout.trim();
      assert.match(key, /^vigil\.log\/[0-9a-f]{32}\+[0-9a-f]{8}\+/);
      const keyFile = join(dir.path, 'keys', 'log-signing.key');
      assert.equal(statSync(keyFile).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir.path, 'keys')).mode & 0o777, 0o700);
      assert.equal(existsSync(join(dir.path, 'store', 'log-signing.key')), false, 'the key is not in the store folder');

      // Three times: kill -9 under load while checkpoints are made, restart, and check the checkpoint the
      // new process publishes against the last one the killed process published.
      let next: CheckpointJson | undefined;
      for (const round of ['a', 'b', 'c']) {
        const load = ingestFor(serve.url, ingestor, 1200, round);
        await new Promise((r) => setTimeout(r, 900));
        const published = await get<CheckpointJson>('/api/v1/log/checkpoint');
        assert.ok(published.tree_size >= (next?.tree_size ?? 1));
        assert.equal(published.key, key);
        serve.proc.kill('SIGKILL');
        await serve.exited;
        await load;

        serve = await startServe(config, dir.path);
        next = await get<CheckpointJson>('/api/v1/log/checkpoint');
        assert.ok(next.tree_size >= published.tree_size);
        const proof = await get<{ consistency_path: string[] }>(`/api/v1/log/proofs/consistency?from=${published.tree_size}&to=${next.tree_size}`);
        const [oldFile, newFile] = [file('old.checkpoint', published.checkpoint), file('new.checkpoint', next.checkpoint)];
        const consistent = runCli(['log', 'verify-consistency', oldFile, newFile, '--key', key, '--proof', file('proof.json', JSON.stringify(proof))]);
        assert.equal(consistent.status, 0, `round ${round}: ${consistent.stdout}${consistent.stderr}`);
        const fetched = runCli(['log', 'verify-consistency', oldFile, newFile, '--key', key, '--url', serve.url], { env: { VIGIL_TOKEN: viewer } });
        assert.equal(fetched.status, 0, fetched.stdout + fetched.stderr);
      }
      const newFile = join(dir.path, 'new.checkpoint');
      const inclusion = await get<{ leaf_index: number; inclusion_path: string[] }>(`/api/v1/log/proofs/inclusion?seq=3&size=${next!.tree_size}`);
      assert.equal(inclusion.leaf_index, 2);

      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
      const exported = runCli(['log', 'export', '--raw', '--config', config]);
      assert.equal(exported.status, 0, exported.stderr);
      const exportFile = file('export.jsonl', exported.stdout);
      const verified = runCli(['log', 'verify', '--export', exportFile, '--checkpoint', newFile, '--key', key]);
      assert.equal(verified.status, 0, verified.stdout + verified.stderr);
      assert.equal((JSON.parse(verified.stdout) as { size: number }).size, next!.tree_size);
      const line = exported.stdout.split('\n')[2]!;
      const included = runCli(['log', 'verify-inclusion', file('record.json', line), newFile, '--key', key, '--proof', file('inclusion.json', JSON.stringify(inclusion))]);
      assert.equal(included.status, 0, included.stdout + included.stderr);

      const lines = exported.stdout.split('\n');
      lines.splice(4, 1);
      const tampered = runCli(['log', 'verify', '--export', file('tampered.jsonl', lines.join('\n')), '--checkpoint', newFile, '--key', key]);
      assert.equal(tampered.status, 1);
      assert.match(tampered.stdout, /"badSeq":5/);

      // The store's own verification covers the tree and every stored checkpoint, also after a replay rebuilt the tree.
      const local = runCli(['log', 'verify', '--config', config]);
      assert.equal(local.status, 0, local.stdout + local.stderr);
      assert.ok((JSON.parse(local.stdout) as { tree: { checkpoints: number } }).tree.checkpoints >= 2);
      assert.equal(runCli(['replay', '--config', config]).status, 0);
      assert.equal(runCli(['log', 'verify', '--config', config]).status, 0);
      assert.equal(readFileSync(keyFile, 'utf8').startsWith('PRIVATE+KEY+vigil.log/'), true);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });
});
