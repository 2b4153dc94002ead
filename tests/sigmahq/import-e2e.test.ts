import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { CLI, runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { fixturePath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { exportRequest, receiverBody, regressionCases } from '../helpers/windows-events.js';

/**
 * Issue 20 end to end: `vigil rules import` loads SigmaHQ's whole `rules/` into a running `vigil
 * serve` with zero refusals (any refusal is listed with its reason), the plan's counts add up, and
 * the regression events, posted as an OpenTelemetry Collector would post them, raise alerts from
 * their rules with the rules' authors on the alerts.
 */

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Runs the CLI without blocking the event loop (the server is a child of this process too). */
function runCliAsync(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    proc.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
    proc.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
    proc.once('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

interface Plan { summary: { rules: number; ready: number; degraded: number; blocked: number; disabled: number }; rules: Array<{ ruleId: string; state: string; missingCapabilities: Array<{ fix: string }> }> }

describe('SigmaHQ at scale through vigil serve', () => {
  it('imports all 3,141 rules, plans them, and fires the regression events with authors on the alerts', { timeout: 600_000 }, async () => {
    const dir = tempDir();
    const port = await freePort();
    const config = writeTestConfig(dir.path, { server: { host: '127.0.0.1', port, allowLoopbackAdmin: false } });
    const token = (JSON.parse(runCli(['api-token-generate', 'importer', 'admin', '--config', config]).stdout) as { token: string }).token;
    const serve = await startServe(config, dir.path);
    const api = async <T>(path: string, init: RequestInit = {}): Promise<{ status: number; body: T }> => {
      const res = await fetch(`${serve.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...init.headers } });
      return { status: res.status, body: await res.json() as T };
    };
    try {
      const before = (await api<Plan>('/api/v1/detection-plan')).body.summary.rules;
      const imported = await runCliAsync(['rules', 'import', fixturePath('sigmahq', 'rules'), '--url', serve.url], { VIGIL_TOKEN: token });
      assert.equal(imported.status, 0, imported.stderr + imported.stdout);
      const summary = JSON.parse(imported.stdout) as { files: number; imported: number; blocked: number; blockedByLogsource: Array<{ logsource: string; rules: number }>; invalid: unknown[] };
      assert.deepEqual(summary.invalid, [], 'every refusal, with its reason');
      assert.equal(summary.files, 3141);
      assert.equal(summary.imported, 3141);
      assert.equal(summary.blocked, summary.blockedByLogsource.reduce((n, b) => n + b.rules, 0));
      assert.ok(summary.blockedByLogsource.some((b) => b.logsource === '{product: aws, service: cloudtrail}'), 'cloud audit logs wait for a source');
      assert.match(imported.stderr, /rules import: 3141\/3141 files, 3141 rules imported/);

      const plan = (await api<Plan>('/api/v1/detection-plan')).body;
      const s = plan.summary;
      assert.equal(s.rules, before + 3141);
      assert.equal(s.ready + s.degraded + s.blocked + s.disabled, s.rules, 'the plan counts add up');
      assert.equal(plan.rules.length, s.rules);
      const cloudtrail = plan.rules.find((r) => r.state === 'blocked' && r.missingCapabilities.some((m) => m.fix.includes('{product: aws, service: cloudtrail}')));
      assert.ok(cloudtrail, 'an unmapped rule is blocked and names its logsource');

      // The regression events, as the windowseventlog receiver exports them.
      const cases = regressionCases(fixturePath('sigmahq'));
      assert.equal(cases.length, 192);
      for (let i = 0; i < cases.length; i += 20) {
        const bodies = cases.slice(i, i + 20).flatMap((c) => c.events.map((e) => receiverBody(e)));
        const res = await api<unknown>('/api/v1/ingest/opentelemetry-log', { method: 'POST', body: JSON.stringify({ records: [exportRequest(bodies)] }) });
        assert.equal(res.status, 202, JSON.stringify(res.body).slice(0, 500));
      }
      const silent: string[] = [];
      for (const c of cases) {
        const { body } = await api<{ alerts: Array<{ ruleId: string; author?: string }> }>(`/api/v1/alerts?rule=${c.ruleId}`);
        const alert = body.alerts.find((a) => a.ruleId === c.ruleId);
        if (!alert) silent.push(`${c.title} (${c.ruleId})`);
        else assert.ok(alert.author && alert.author.length > 0, `${c.title}: the alert credits the rule's author`);
      }
      assert.deepEqual(silent, []);
      const sysmon = plan.rules.length > 0 ? (await api<Plan>('/api/v1/detection-plan')).body.rules.find((r) => r.ruleId === cases[0]!.ruleId) : undefined;
      assert.equal(sysmon?.state, 'ready', 'a Windows rule whose events arrived is ready');
    } finally {
      serve.proc.kill('SIGTERM');
      await serve.exited;
    }
  });
});
