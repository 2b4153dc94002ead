import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { join } from 'node:path';
import { open } from 'lmdb';

describe('vigil replay and vigil log export', () => {
  it('replays every read model, shows state as of a seq, and exports records as JSON lines', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string };
    const serve = await startServe(config, dir.path);
    try {
      for (let b = 0; b < 3; b++) {
        const res = await fetch(`${serve.url}/api/v1/events`, {
          method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify([makeEvent({ id: `r${b}`, category: b === 2 ? 'identity' : 'network' })]),
        });
        assert.equal(res.status, 202);
      }
    } finally {
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
    }
    try {
      const full = JSON.parse(runCli(['replay', '--config', config]).stdout) as { records: number; recordsByType: Record<string, number>; eventsByCategory: Record<string, number>; recordsPerSecond: number; cpuSeconds: number };
      assert.equal(full.recordsByType.EventsIngested, 3);
      assert.equal(full.eventsByCategory.network, 2);
      assert.ok(full.recordsPerSecond > 0);
      assert.ok(Number.isFinite(full.cpuSeconds) && full.cpuSeconds > 0);
      const lines = runCli(['log', 'export', '--config', config]).stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; type: string; prev: string });
      assert.equal(lines.length, full.records);
      assert.deepEqual(lines.map((l) => l.seq), lines.map((_, i) => i + 1));
      const firstIngest = lines.find((l) => l.type === 'EventsIngested')!.seq;
      const asOf = JSON.parse(runCli(['replay', '--until', String(firstIngest), '--config', config]).stdout) as { recordsByType: Record<string, number> };
      assert.equal(asOf.recordsByType.EventsIngested, 1);
      const part = runCli(['log', 'export', '--from', '2', '--to', '3', '--config', config]).stdout.trim().split('\n');
      assert.deepEqual(part.map((l) => (JSON.parse(l) as { seq: number }).seq), [2, 3]);
      assert.equal(runCli(['replay', '--until', '99999', '--config', config]).status, 1);
      assert.equal(JSON.parse(runCli(['log', 'verify', '--config', config]).stdout).ok, true);
    } finally { dir.cleanup(); }
  });
});

describe('a log whose tail was cut', () => {
  it('is named by vigil log verify at its first missing record, and vigil serve refuses it in one line', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const { token } = JSON.parse(runCli(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as {
      token: string;
    };
    const serve = await startServe(config, dir.path);
    try {
      for (let b = 0; b < 3; b++) {
        const res = await fetch(`${serve.url}/api/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify([makeEvent({ id: `t${b}` })]),
        });
        assert.equal(res.status, 202);
      }
    } finally {
      serve.proc.kill('SIGTERM');
      assert.equal(await serve.exited, 0);
    }
    try {
      // What a person with the disk could do: delete the last two records, leaving the recorded head.
      const root = open({ path: join(dir.path, 'store'), maxDbs: 64 });
      const log = root.openDB<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
      const last = [...log.getKeys({ reverse: true, limit: 1 })][0]!;
      await log.remove(last);
      await log.remove(last - 1);
      await root.close();
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 1, verify.stderr);
      const result = JSON.parse(verify.stdout) as { ok: boolean; badSeq: number; reason: string };
      assert.deepEqual([result.ok, result.badSeq], [false, last - 1]);
      assert.match(result.reason, new RegExp(`records ${last - 1} to ${last} are missing`));
      const refused = runCli(['serve', '--config', config]);
      assert.notEqual(refused.status, 0);
      assert.match(refused.stderr, new RegExp(`refusing to start: records ${last - 1} to ${last} of the log are missing`));
      assert.doesNotMatch(refused.stderr, /unexpected error|\n\s+at /);
    } finally {
      dir.cleanup();
    }
  });
});
