import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiToken, CLI, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { makeEvent } from '../helpers/instance.js';
import { makeRotation, rotationText } from '../../src/log/key-rotation.js';
import { parseNote, signNote, parseVerifierKey, verifierOf, type NoteSigner } from '../../src/log/signed-note.js';
import { parseCheckpoint, formatCheckpoint } from '../../src/log/checkpoint.js';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';

/**
 * docs/log.md, "Rotating the signing key": a real `vigil serve` before and after a rotation, the log's own
 * record of it, and verifiers holding the old key or the new one.
 */

async function ingest(url: string, token: string, ids: string[]): Promise<void> {
  const res = await fetch(`${url}/api/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(ids.map((id) => makeEvent({ id }))),
  });
  await res.arrayBuffer();
  assert.equal(res.status, 202);
}

async function getJson<T>(url: string, token: string): Promise<T> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200, url);
  return (await res.json()) as T;
}

/** The latest checkpoint once it covers at least `size` records (checkpoints are made every second here). */
async function checkpointOf(url: string, token: string, size: number): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const res = await fetch(`${url}/api/v1/log/checkpoint`, { headers: { authorization: `Bearer ${token}` } });
    // 404 until the first checkpoint is made.
    const cp = res.status === 200 ? ((await res.json()) as { tree_size: number; checkpoint: string }) : undefined;
    if (res.status !== 200) await res.arrayBuffer();
    if (cp && cp.tree_size >= size) return cp.checkpoint;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no checkpoint of ${size} records`);
}

async function stop(serve: ServeProcess): Promise<void> {
  serve.proc.kill('SIGTERM');
  assert.equal(await serve.exited, 0, serve.output());
}

const recordsOf = (config: string) =>
  runCli(['log', 'export', '--config', config])
    .stdout.trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { seq: number; type: string; data: { note?: string } });

describe('rotating the log signing key', () => {
  it('embedded: rotate-key while stopped; the log records it once; old-key and new-key verifiers verify everything', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path, { log: { checkpointEverySeconds: 1 } });
    const file = (name: string, text: string) => (writeFileSync(join(dir.path, name), text), join(dir.path, name));
    const ingestor = apiToken(config, 'loader', 'ingestor');
    const viewer = apiToken(config, 'auditor', 'viewer');
    let serve = await startServe(config, dir.path);
    try {
      await ingest(serve.url, ingestor, ['before-1', 'before-2']);
      const oldCp = file('old-cp.txt', await checkpointOf(serve.url, viewer, 1));
      const oldKey = runCli(['log', 'public-key', '--config', config]).stdout.trim();
      await stop(serve);

      const rotated = runCli(['log', 'rotate-key', '--config', config]);
      assert.equal(rotated.status, 0, rotated.stderr);
      const report = JSON.parse(rotated.stdout) as { old: string; new: string; note: string; retired: string; recordedAt: number };
      assert.equal(report.old, oldKey);
      const newKey = runCli(['log', 'public-key', '--config', config]).stdout.trim();
      assert.equal(report.new, newKey);
      assert.notEqual(newKey, oldKey);
      assert.equal(parseVerifierKey(newKey)!.name, parseVerifierKey(oldKey)!.name, 'the origin stays');
      assert.equal(statSync(report.retired).mode & 0o777, 0o600);
      assert.equal(runCli(['log', 'verify', '--config', config]).status, 0, 'verified before the next start');

      serve = await startServe(config, dir.path);
      await ingest(serve.url, ingestor, ['after-1']);
      const newCpText = await checkpointOf(serve.url, viewer, report.recordedAt + 1);
      const newCp = file('new-cp.txt', newCpText);
      const cpOrigin = parseCheckpoint((parseNote(newCpText) as { text: string }).text);
      assert.ok(cpOrigin.ok && cpOrigin.checkpoint.origin === parseVerifierKey(oldKey)!.name);
      const listed = await getJson<{ rotations: Array<{ seq: number; note: string }> }>(
        `${serve.url}/api/v1/log/key-rotations`,
        viewer,
      );
      assert.deepEqual(listed.rotations, [{ seq: report.recordedAt, note: report.note }]);
      const rotations = file('rotations.json', JSON.stringify(listed));

      // The auditor who pinned the old key: the chain from the instance, or from a file, takes it to the new checkpoint.
      const env = { VIGIL_TOKEN: viewer };
      const viaUrl = runCli(['log', 'verify-consistency', oldCp, newCp, '--key', oldKey, '--url', serve.url], { env });
      assert.equal(viaUrl.status, 0, viaUrl.stdout + viaUrl.stderr);
      const oldSize = parseCheckpoint((parseNote(readFileSync(oldCp, 'utf8')) as { text: string }).text);
      const newSize = cpOrigin.ok ? cpOrigin.checkpoint.size : 0;
      const proof = file(
        'proof.json',
        JSON.stringify(
          await getJson(
            `${serve.url}/api/v1/log/proofs/consistency?from=${oldSize.ok ? oldSize.checkpoint.size : 0}&to=${newSize}`,
            viewer,
          ),
        ),
      );
      const withoutChain = runCli(['log', 'verify-consistency', oldCp, newCp, '--key', oldKey, '--proof', proof]);
      assert.equal(withoutChain.status, 1, 'the old key alone does not verify the new checkpoint');
      assert.match(withoutChain.stdout + withoutChain.stderr, /checkpoint: no signature/);
      const withFile = runCli(['log', 'verify-consistency', oldCp, newCp, '--key', oldKey, '--rotations', rotations, '--proof', proof]);
      assert.equal(withFile.status, 0, withFile.stdout + withFile.stderr);
      const fromNew = runCli(['log', 'verify-consistency', oldCp, newCp, '--key', newKey, '--rotations', rotations, '--proof', proof]);
      assert.equal(fromNew.status, 0, 'the new key reaches back to the old checkpoint');

      // Forged chains: a rotation signed by the new key only, or one between keys outside the chain.
      const stranger: NoteSigner = { name: parseVerifierKey(oldKey)!.name, seed: new Uint8Array(32).fill(42) };
      const forgedCp = file('forged-cp.txt', signNote(formatCheckpoint(cpOrigin.ok ? cpOrigin.checkpoint : assert.fail()), stranger));
      const unsigned = signNote(rotationText(stranger.name, parseVerifierKey(oldKey)!, verifierOf(stranger)), stranger);
      const other: NoteSigner = { ...stranger, seed: new Uint8Array(32).fill(43) };
      const outside = makeRotation(other, stranger);
      for (const notes of [[unsigned], [outside], [report.note, unsigned, outside]]) {
        const forged = runCli(['log', 'verify-consistency', oldCp, forgedCp, '--key', oldKey, '--rotations', file('forged.json', JSON.stringify(notes)), '--proof', proof]);
        assert.equal(forged.status, 1, forged.stdout);
        assert.match(forged.stdout + forged.stderr, /checkpoint: no signature by/);
      }
      await stop(serve);

      // One LogKeyRotated, not recorded again by the next start; the store verifies; an export verifies with either key.
      serve = await startServe(config, dir.path);
      await ingest(serve.url, ingestor, ['after-2']);
      await stop(serve);
      const records = recordsOf(config);
      assert.deepEqual(
        records.filter((r) => r.type === 'LogKeyRotated').map((r) => [r.seq, r.data.note]),
        [[report.recordedAt, report.note]],
      );
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout);
      assert.deepEqual((JSON.parse(verify.stdout) as { tree: { keys: string[] } }).tree.keys.sort(), [oldKey, newKey].sort());
      const exported = file('export.jsonl', runCli(['log', 'export', '--raw', '--config', config]).stdout);
      const audit = runCli(['log', 'verify', '--export', exported, '--checkpoint', newCp, '--key', oldKey]);
      assert.equal(audit.status, 0, audit.stdout);
      const back = runCli(['log', 'verify', '--export', exported, '--checkpoint', oldCp, '--key', newKey]);
      assert.equal(back.status, 0, back.stdout);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });

  it('embedded: a rerun finishes a rotation that stopped before the new key was installed or recorded', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const ingestor = apiToken(config, 'loader', 'ingestor');
    let serve = await startServe(config, dir.path);
    try {
      await ingest(serve.url, ingestor, ['one']);
      await stop(serve);
      const keyFile = join(dir.path, 'keys', 'log-signing.key');
      const oldKey = runCli(['log', 'public-key', '--config', config]).stdout.trim();
      // Stopped after writing the new key beside the old one: the rerun installs that key, not another.
      const pending: NoteSigner = { name: parseVerifierKey(oldKey)!.name, seed: new Uint8Array(32).fill(5) };
      const { signerKeyString, verifierKeyString } = await import('../../src/log/signed-note.js');
      writeFileSync(`${keyFile}.next`, `${signerKeyString(pending)}\n`, { mode: 0o600 });
      const rerun = runCli(['log', 'rotate-key', '--config', config]);
      assert.equal(rerun.status, 0, rerun.stderr);
      const report = JSON.parse(rerun.stdout) as { new: string; finished?: boolean; recordedAt: number };
      assert.deepEqual([report.new, report.finished], [verifierKeyString(verifierOf(pending)), true]);
      assert.ok(!existsSync(`${keyFile}.next`));
      // Nothing left to finish: another run is another rotation, recorded as well.
      const again = JSON.parse(runCli(['log', 'rotate-key', '--config', config]).stdout) as { old: string; new: string };
      assert.equal(again.old, report.new);
      serve = await startServe(config, dir.path);
      await ingest(serve.url, ingestor, ['two']);
      await stop(serve);
      assert.equal(recordsOf(config).filter((r) => r.type === 'LogKeyRotated').length, 2);
      assert.equal(runCli(['log', 'verify', '--config', config]).status, 0);
      // A record past the last signed head: refused before anything changes.
      const store = openLmdbStore(join(dir.path, 'store'));
      await openLmdbLog(store).append([{ type: 'AlertReviewed', at: new Date().toISOString(), data: { forged: true } }]);
      await store.close();
      const keyBefore = readFileSync(keyFile, 'utf8');
      const refused = runCli(['log', 'rotate-key', '--config', config]);
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /past the last signed head: run vigil log quarantine-tail first/);
      assert.equal(readFileSync(keyFile, 'utf8'), keyBefore);
      assert.ok(!existsSync(`${keyFile}.next`));
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      dir.cleanup();
    }
  });

  it('separate signer: signer rotate, restart it with the new key; the instance records the rotation once', async () => {
    const dir = tempDir();
    const socket = join(dir.path, 'signer.sock');
    const config = writeTestConfig(dir.path, { log: { signer: { socket } } });
    const ingestor = apiToken(config, 'loader', 'ingestor');
    const [k1, k2, state] = [join(dir.path, 'k', 'k1.key'), join(dir.path, 'k', 'k2.key'), join(dir.path, 'signer-state')];
    assert.equal(runCli(['signer', 'key', '--out', k1]).status, 0);
    const signerOf = async (key: string): Promise<ChildProcess> => {
      const p = spawn(process.execPath, [CLI, 'signer', 'serve', '--key', key, '--state', state, '--socket', socket], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      await new Promise<void>((resolve, reject) => {
        p.stdout!.on('data', (c: Buffer) => ((out += c.toString()), /head signer listening/.test(out) && resolve()));
        p.stderr!.on('data', (c: Buffer) => (out += c.toString()));
        p.once('exit', () => reject(new Error(`signer exited: ${out}`)));
      });
      return p;
    };
    const stopSigner = async (p: ChildProcess) => {
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await exited;
    };
    let signer = await signerOf(k1);
    let serve = await startServe(config, dir.path);
    try {
      await ingest(serve.url, ingestor, ['one']);
      await stop(serve);
      // Rotated beside the running signer: its stop does not lose the rotation.
      const rotated = runCli(['signer', 'rotate', '--key', k1, '--out', k2, '--state', state]);
      assert.equal(rotated.status, 0, rotated.stderr);
      const report = JSON.parse(rotated.stdout) as { note: string; new: string };
      assert.equal(statSync(k2).mode & 0o777, 0o600);
      const rerun = JSON.parse(runCli(['signer', 'rotate', '--key', k1, '--out', k2, '--state', state]).stdout) as typeof report;
      assert.deepEqual([rerun.note, rerun.new, (rerun as { finished?: boolean }).finished], [report.note, report.new, true]);
      await stopSigner(signer);
      signer = await signerOf(k2);
      for (const n of [1, 2]) {
        serve = await startServe(config, dir.path);
        await ingest(serve.url, ingestor, [`after-${n}`]);
        await stop(serve);
      }
      const recorded = recordsOf(config).filter((r) => r.type === 'LogKeyRotated');
      assert.deepEqual(recorded.map((r) => r.data.note), [report.note]);
      assert.equal(runCli(['log', 'public-key', '--config', config]).stdout.trim(), report.new);
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout);
      // A rotation refused: the separate signer's key is not rotated by the instance's command.
      const refused = runCli(['log', 'rotate-key', '--config', config]);
      assert.equal(refused.status, 1);
      assert.match(refused.stderr, /vigil signer rotate/);
    } finally {
      serve.proc.kill('SIGKILL');
      await serve.exited;
      await stopSigner(signer);
      dir.cleanup();
    }
  });
});
