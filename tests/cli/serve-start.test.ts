import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { CLI, runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { openInstanceStore } from '../../src/cli/instance/open.js';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';

/** A TCP server holding a free loopback port, so `vigil serve` finds it busy. */
async function holdPort(): Promise<{ port: number; server: Server }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as { port: number }).port, server };
}

/** The JSON line of `vigil serve`'s output whose msg is `msg`. */
function lineOf(output: string, msg: string): Record<string, unknown> {
  const line = output.split('\n').find((l) => l.includes(`"msg":"${msg}"`));
  assert.ok(line, `no ${msg} line in ${output}`);
  return JSON.parse(line) as Record<string, unknown>;
}

async function stop(serve: Awaited<ReturnType<typeof startServe>>): Promise<void> {
  serve.proc.kill('SIGTERM');
  await serve.exited;
}

describe('vigil serve: where it listens and why it cannot', () => {
  it('takes --port over VIGIL_PORT over server.port, and says which config file and which source are in force', async () => {
    const dir = tempDir();
    try {
      const held = await holdPort();
      // The file names a busy port: only an override lets serve start.
      const config = writeTestConfig(dir.path, { server: { host: '127.0.0.1', port: held.port } });
      try {
        const byFlag = await startServe(config, dir.path, ['--port', '0'], { VIGIL_PORT: String(held.port) });
        try {
          const listening = lineOf(byFlag.output(), 'listening');
          assert.equal(listening['config'], config);
          assert.deepEqual(listening['listenFrom'], { host: `server.host in ${config}`, port: '--port' });
          assert.equal(listening['loopbackAdmin'], false);
          assert.notEqual(new URL(byFlag.url).port, String(held.port));
          assert.match(listening['note'] as string, /^loopback administration is off \(server\.allowLoopbackAdmin is false in the config in force\): every \/api\/v1 request needs a bearer token; create one with vigil api-token-generate/);
        } finally { await stop(byFlag); }
        const byEnv = await startServe(config, dir.path, [], { VIGIL_PORT: '0', VIGIL_HOST: '127.0.0.1' });
        try {
          assert.deepEqual(lineOf(byEnv.output(), 'listening')['listenFrom'], { host: 'VIGIL_HOST', port: 'VIGIL_PORT' });
        } finally { await stop(byEnv); }
      } finally { held.server.close(); }
    } finally { dir.cleanup(); }
  });

  it('refuses a busy port by naming where the port came from and what to do, without a stack trace', async () => {
    const dir = tempDir();
    const held = await holdPort();
    try {
      const config = writeTestConfig(dir.path, { server: { host: '127.0.0.1', port: held.port } });
      const fromFile = runCli(['serve', '--config', config]);
      assert.equal(fromFile.status, 1);
      assert.equal(fromFile.stderr.trim(), `vigil: port ${held.port} on 127.0.0.1 is already in use (the port comes from server.port in ${config}): stop the process that holds it (another vigil serve?) or choose another port with --port N or VIGIL_PORT=N (0 picks a free one) or server.port in the config file`);
      const fromFlag = runCli(['serve', '--config', config, '--port', String(held.port)]);
      assert.match(fromFlag.stderr, /already in use \(the port comes from --port\)/);
      assert.doesNotMatch(fromFlag.stderr, /unexpected error|    at /);
      const bad = runCli(['serve', '--config', config], { env: { VIGIL_PORT: '70000' } });
      assert.equal(bad.status, 1);
      assert.match(bad.stderr, /^vigil: VIGIL_PORT: expected a port number 0\.\.65535/);
      // The store was closed again: a second start on a free port works.
      const next = await startServe(config, dir.path, ['--port', '0']);
      await stop(next);
    } finally {
      held.server.close();
      dir.cleanup();
    }
  });

  it('prints a refusal of start-up checks as what to fix, not as an unexpected error', () => {
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path, { server: { host: '192.0.2.1', port: 0 } });
      const r = runCli(['serve', '--config', config]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /^vigil: cannot listen on 192\.0\.2\.1: it is not an address of this machine \(the host comes from server\.host in .*\); use 127\.0\.0\.1/);
    } finally { dir.cleanup(); }
  });
});

/** The nice value of each thread of process `pid`, by thread id (field 19 of /proc/PID/task/TID/stat). */
function threadNice(pid: number): Map<number, number> {
  const nice = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    nice.set(Number(tid), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return nice;
}

describe('vigil serve: the read side runs below the writer', { skip: process.platform !== 'linux' && 'thread nice values are Linux only' }, () => {
  it('lowers the read side\'s thread alone by limits.readSideNice, and none with 0', async () => {
    const dir = tempDir();
    try {
      for (const readSideNice of [7, 0]) {
        const serve = await startServe(writeTestConfig(dir.path, { limits: { readSideNice } }), dir.path);
        try {
          const nice = threadNice(serve.proc.pid!);
          // The writer is the process's main thread; every thread but the read side's keeps its value.
          const writer = nice.get(serve.proc.pid!)!;
          const lowered = [...nice].filter(([, n]) => n !== writer);
          if (readSideNice === 0) assert.deepEqual(lowered, []);
          else {
            assert.equal(lowered.length, 1, `one thread below the writer: ${JSON.stringify([...nice])}`);
            assert.equal(lowered[0]![1], Math.min(19, writer + readSideNice));
          }
        } finally { await stop(serve); }
      }
    } finally { dir.cleanup(); }
  });
});

describe('vigil log export into a closed pipe', () => {
  it('ends with status 0 and no EPIPE trace when the reader stops early (| head -1)', async () => {
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path);
      // Far more than a pipe buffer of records, so the export is still writing when head exits.
      const inst = await openInstanceStore(join(dir.path, 'store'));
      const padding = 'x'.repeat(900);
      await Promise.all(Array.from({ length: 400 }, (_, i) => inst.writer.execute((m) => decideIngestEvents(m, [makeEvent({ id: `pipe-${i}`, attributes: { padding } }) as unknown as NormalizedEvent]), { now: '2026-11-22T10:00:00.000Z' })));
      await inst.close();
      const r = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" log export --config "${config}" | head -1; echo "status=\${PIPESTATUS[0]}" >&2`], { encoding: 'utf8', timeout: 120_000 });
      assert.equal(JSON.parse(r.stdout.trim()).seq, 1, 'head got the first record');
      assert.match(r.stderr, /status=0\s*$/);
      assert.doesNotMatch(r.stderr, /EPIPE|Error|    at /);
    } finally { dir.cleanup(); }
  });
});
