import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { CollectorSubmissionAccepted } from '../../src/events/collector-records.js';
import { RecordType } from '../../src/events/record-types.js';
import { openInstanceStore } from '../../src/cli/instance/open.js';
import { CLI, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Generous: on a loaded 2-core machine each step (a CLI process per poll, the agent's batching and
// retries) is many times slower than alone; the test checks what arrives, not how fast.
// The deadline is well inside the test's time-out, so a wait that never ends fails with what the
// processes said (`explain`) instead of a bare time-out.
async function until(check: () => boolean, explain: () => string, ms = 240_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`condition not reached in time\n${explain()}`);
    await sleep(50);
  }
}

const acked = (agentConfig: string) => (JSON.parse(runCli(['collector', 'status', '--config', agentConfig]).stdout) as { lastAckedSequence: number }).lastAckedSequence;

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function startAgent(config: string, env: NodeJS.ProcessEnv): { proc: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const proc = spawn(process.execPath, [CLI, 'collector', 'run', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  return { proc, output: () => out, exited: new Promise((r) => proc.once('exit', (code) => r(code))) };
}

/** Signals a process and waits for it to exit; one still running after 30 s is killed and the test fails with what it said. */
async function kill(p: { proc: ChildProcess; exited: Promise<number | null>; output: () => string }, signal: NodeJS.Signals): Promise<void> {
  p.proc.kill(signal);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), 30_000); });
  const outcome = await Promise.race([p.exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') {
    p.proc.kill('SIGKILL');
    await p.exited;
    throw new Error(`still running 30 s after ${signal}: ${p.output().slice(-3000)}`);
  }
}

describe('collector agent end to end', () => {
  it('delivers every line exactly once across rotation, kill -9 of the agent and of the server, with a verifiable log', { timeout: 400_000 }, async () => {
    const dir = tempDir();
    const port = await freePort();
    const config = writeTestConfig(dir.path, { server: { host: '127.0.0.1', port, allowLoopbackAdmin: false } });
    const issued = runCli(['collector-token', 'create', 'web-01', '--expires-in', '15m', '--config', config]);
    assert.equal(issued.status, 0, issued.stderr);
    const enrollmentToken = (JSON.parse(issued.stdout) as { token: string }).token;
    const bearer = (JSON.parse(runCli(['api-token-generate', 'web-01-agent', 'collector', '--collector-id', 'web-01', '--config', config]).stdout) as { token: string }).token;
    const viewer = (JSON.parse(runCli(['api-token-generate', 'reader', 'viewer', '--config', config]).stdout) as { token: string }).token;
    const tokenFile = join(dir.path, 'enroll.token');
    writeFileSync(tokenFile, `${enrollmentToken}\n`, { mode: 0o600 });
    const logFile = join(dir.path, 'auth.log');
    writeFileSync(logFile, '');
    const agentConfig = join(dir.path, 'agent.json');
    writeFileSync(agentConfig, JSON.stringify({
      server: `http://127.0.0.1:${port}`, collectorId: 'web-01', stateDir: 'agent-state',
      journal: { enabled: true, command: join(dir.path, 'no-such-journalctl') }, files: [logFile],
      batch: { maxEvents: 40, maxWaitMs: 100 }, retry: { initialMs: 50, maxMs: 500 }, facts: { intervalMs: 60_000 },
    }));
    let serve: ServeProcess = await startServe(config, dir.path);
    let agent: ReturnType<typeof startAgent> | undefined;
    try {
      const enrolled = runCli(['collector', 'enroll', '--server', serve.url, '--collector-id', 'web-01', '--token-file', tokenFile, '--config', agentConfig]);
      assert.equal(enrolled.status, 0, enrolled.stderr);
      assert.equal((JSON.parse(enrolled.stdout) as { epoch: number }).epoch, 1);
      const env = { VIGIL_COLLECTOR_TOKEN: bearer };
      agent = startAgent(agentConfig, env);
      const total = 1200;
      let n = 0;
      const write = async (count: number) => {
        for (let i = 0; i < count; i++, n++) {
          appendFileSync(logFile, `Nov 22 10:${String(Math.floor(n / 60) % 60).padStart(2, '0')}:${String(n % 60).padStart(2, '0')} web-01 sshd[${1000 + n}]: Failed password for alice from 192.0.2.${n % 250} port 22 ssh2 line-${n}\n`);
          if (i % 50 === 49) await sleep(10);
        }
      };
      await write(300);
      const started = agent;
      await until(() => {
        // An agent that exited will never acknowledge anything: say so at once.
        if (started.proc.exitCode !== null) throw new Error(`the agent exited with ${started.proc.exitCode}: ${started.output().slice(-3000)}`);
        return acked(agentConfig) > 0;
      }, () => `agent: ${started.output().slice(-3000)}\nserve: ${serve.output().slice(-3000)}`);
      await write(100);
      await kill(agent, 'SIGKILL');
      await write(100);
      renameSync(logFile, `${logFile}.1`);
      writeFileSync(logFile, '');
      agent = startAgent(agentConfig, env);
      await write(300);
      await kill(serve, 'SIGKILL');
      await write(100);
      await sleep(400);
      serve = await startServe(config, dir.path);
      await write(300);
      assert.equal(n, total);
      assert.match(agent.output(), /journal collection skipped/);

      const lineCounts = async (): Promise<Map<string, number>> => {
        const seen = new Map<string, number>();
        let cursor: string | null = null;
        do {
          const res: Response = await fetch(`${serve.url}/api/v1/events?adapter=collector&limit=1000${cursor ? `&cursor=${cursor}` : ''}`, { headers: { authorization: `Bearer ${viewer}` } });
          const page = await res.json() as { events: Array<{ attributes: { MESSAGE?: string } }>; nextCursor: string | null };
          for (const e of page.events) {
            const m = /line-(\d+)$/.exec(e.attributes.MESSAGE ?? '');
            if (m) seen.set(m[1]!, (seen.get(m[1]!) ?? 0) + 1);
          }
          cursor = page.nextCursor;
        } while (cursor);
        return seen;
      };
      let seen = new Map<string, number>();
      for (let i = 0; i < 300 && seen.size < total; i++) {
        await sleep(200);
        seen = await lineCounts();
      }
      const missing = Array.from({ length: total }, (_, i) => String(i)).filter((i) => !seen.has(i));
      assert.deepEqual(missing.slice(0, 10), [], `${missing.length} lines missing; agent: ${agent.output().slice(-3000)}`);
      // The progress lines: what each acknowledged envelope carried and what the instance accepted, and the outage said once.
      assert.match(agent.output(), /"msg":"acknowledged","sequence":\d+,"events":\d+,"acceptedEvents":\d+,"spooled":\d+/);
      assert.match(agent.output(), /"msg":"cannot reach the server; spooling and retrying"/);
      await kill(agent, 'SIGTERM');
      const status = JSON.parse(runCli(['collector', 'status', '--config', agentConfig]).stdout) as { backlog: { envelopes: number; events: number }; lastAckedSequence: number };
      assert.ok(status.lastAckedSequence >= total / 40, JSON.stringify(status));

      await kill(serve, 'SIGTERM');
      assert.equal(serve.proc.exitCode, 0);
      const inst = await openInstanceStore(join(dir.path, 'store'));
      const ids: string[] = [];
      try {
        for (const r of inst.log.read(1)) if (r.type === RecordType.CollectorSubmissionAccepted) ids.push(...(r.data as CollectorSubmissionAccepted).events.map((e) => e.id));
      } finally {
        await inst.close();
      }
      assert.equal(ids.length, total, 'every event stored once in the log');
      assert.equal(new Set(ids).size, total);
      const verify = runCli(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout + verify.stderr);
    } finally {
      if (agent && agent.proc.exitCode === null) await kill(agent, 'SIGKILL');
      if (serve.proc.exitCode === null) await kill(serve, 'SIGKILL');
      dir.cleanup();
    }
  });
});
