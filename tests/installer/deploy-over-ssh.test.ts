import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { readRegistry } from '../../src/auth/registry.js';
import { hashToken } from '../../src/auth/tokens.js';
import { loadAgentConfig } from '../../src/cli/collector-commands.js';
import { loadConfig } from '../../src/cli/config-file.js';
import * as v from 'valibot';
import { EnrollmentGrantsSchema } from '../../src/services/enrollment-grants.js';
import { secretFileProblem } from '../../src/kernel/secret-files.js';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { resumeArgs } from '../setup/install-run.js';
import { freePort, listeningUrl, startChild, stopChild, waitFor, type Child } from '../setup/processes.js';
import { startSshd, type TestSshd } from './sshd.js';

const dir = tempDir('vigil-deploy-');
const children: Child[] = [];
const procs: Array<ReturnType<typeof spawn>> = [];
let sshd: TestSshd | undefined;
const vmRoot = (vm: string) => join(dir.path, 'vms', vm);
const onVm = (vm: string, path: string) => join(vmRoot(vm), path);

/** A started ExecStart line: the same argv the unit file holds. */
interface Service { readonly proc: ReturnType<typeof spawn>; output(): string; readonly exited: Promise<void> }

/**
 * systemd cannot run inside this test (no init, no user or cgroup of ours), so the test starts
 * each service itself with exactly the ExecStart line of the unit file the installer wrote.
 */
function startUnit(vm: string, unit: string): Service {
  const text = readFileSync(onVm(vm, `etc/systemd/system/${unit}`), 'utf8');
  const line = /^ExecStart=(.+)$/m.exec(text)?.[1];
  assert.ok(line, `${unit} has an ExecStart line`);
  const [exe, ...args] = line.split(' ');
  const proc = spawn(exe!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(proc);
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  return { proc, output: () => out, exited: new Promise((r) => proc.once('exit', () => r())) };
}

async function stopService(s: Service, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill(signal);
  await s.exited;
}

async function browser(url: string, token: string) {
  const r = await fetch(`${url}/v1/browser-sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const body = (await r.json()) as { csrf_token: string };
  const cookie = /^(vigil-setup=[^;]+)/.exec(r.headers.get('set-cookie') ?? '')![1]!;
  return async (path: string, method = 'GET') => {
    const res = await fetch(`${url}${path}`, { method, headers: { cookie, 'x-csrf-token': body.csrf_token, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, ...(method === 'POST' ? { body: '{}' } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** Events the central instance holds from one collector (`source.adapter` collector, `source.instance` its id). */
async function collectorEvents(instanceUrl: string, viewer: string, collectorId: string): Promise<Array<{ id: string; source: { instance: string } }>> {
  const res = await fetch(`${instanceUrl}/api/v1/events?adapter=collector&limit=500`, { headers: { authorization: `Bearer ${viewer}` } });
  if (res.status !== 200) return [];
  const body = (await res.json()) as { events: Array<{ id: string; source: { instance: string } }> };
  return body.events.filter((e) => e.source.instance === collectorId);
}

/** Appends sshd-style syslog lines to a VM's tailed log file (as the VM's own services would). */
function appendLog(vm: string, tag: string): void {
  const file = onVm(vm, 'var/log/vigil-test.log');
  mkdirSync(dirname(file), { recursive: true });
  appendFileSync(file, [1, 2, 3].map((i) => `Nov 22 10:00:0${i} ${vm} sshd[${100 + i}]: Failed password for invalid user ${tag}${i} from 203.0.113.${i} port 4${i}22 ssh2\n`).join(''));
}

function modeOf(path: string): number { return statSync(path).mode & 0o777; }

/** Loads every file the installer wrote with the loaders the instance and the agent use at start. */
function loadWrittenFiles(centralVm: string, collectors: readonly string[]) {
  const { config } = loadConfig(onVm(centralVm, 'etc/vigil/vigil.config.json'), {}, '/');
  assert.equal(config.auth.credentialsFile, onVm(centralVm, 'etc/vigil/secrets/credentials.json'));
  const credentials = readRegistry(config.auth.credentialsFile);
  const grants = v.parse(EnrollmentGrantsSchema, JSON.parse(readFileSync(config.deployment!.enrollmentGrantsFile!, 'utf8')));
  for (const secret of [config.auth.credentialsFile, config.deployment!.identityKeyFile, config.deployment!.enrollmentGrantsFile!, onVm(centralVm, 'etc/vigil/vigil.config.json')]) {
    assert.equal(modeOf(secret), 0o600, `${secret} is 0600`);
    assert.equal(modeOf(dirname(secret)), 0o700, `${dirname(secret)} is 0700`);
    assert.equal(secretFileProblem(secret), undefined);
  }
  const agents = collectors.map((vm) => {
    const agent = loadAgentConfig(onVm(vm, 'etc/vigil/collector/collector.json'));
    for (const secret of [agent.bearerTokenFile!, agent.enrollmentTokenFile!]) {
      assert.equal(modeOf(secret), 0o600, `${secret} is 0600`);
      assert.equal(modeOf(dirname(secret)), 0o700, `${dirname(secret)} is 0700`);
    }
    assert.equal(modeOf(agent.stateDir), 0o700);
    const bearer = readFileSync(agent.bearerTokenFile!, 'utf8').trim();
    const credential = credentials.find((c) => c.tokenHash === hashToken(bearer));
    assert.ok(credential, `${vm}'s bearer token is registered on the central VM`);
    assert.deepEqual([credential.roles, credential.collectorId], [['collector'], agent.collectorId], 'bound to its own collector id (spec 5.3)');
    const token = readFileSync(agent.enrollmentTokenFile!, 'utf8').trim();
    assert.ok(grants.collectors.some((g) => g.collector_id === agent.collectorId && g.token_sha256 === hashToken(token)), `${vm}'s enrollment token is granted`);
    assert.ok(!readFileSync(config.deployment!.enrollmentGrantsFile!, 'utf8').includes(token), 'the central VM holds only token hashes');
    return agent;
  });
  return { config, credentials, grants, agents };
}

function installerArgs(o: { url: string; inventory: string; port: number; tokenFile: string; recovery?: boolean }): string[] {
  return [
    'install', '--setup-url', o.url, '--token-file', o.tokenFile, '--inventory', o.inventory, '--transport', 'ssh',
    '--ssh-key', sshd!.userKeyFile, '--trust-on-first-use', '--yes', '--collector-file', '/var/log/vigil-test.log', '--service-manager', 'none', '--vigil-exec', join(dir.path, 'bin', 'vigil'),
    '--work-dir', join(dir.path, 'work'), '--central-listen', `127.0.0.1:${o.port}`, '--snapshot-interval', '1', '--wait-seconds', '300',
    ...(o.recovery ? ['--recovery'] : []),
  ];
}

const installedLine = (installer: Child, vm: string) => installer.output().split('\n').some((l) => l.includes('"msg":"service installed, not started') && l.includes(`"vm":"${vm}"`));

describe('deploy on three VMs over SSH, then recover the central VM', () => {
  after(async () => {
    for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    for (const c of children) await stopChild(c);
    await sshd?.stop();
    dir.cleanup();
  });

  it('installs over a real sshd, runs what it wrote, completes, and re-enrolls the collectors after a recovery', { timeout: 600_000 }, async () => {
    sshd = await startSshd(join(dir.path, 'sshd'), await freePort());
    mkdirSync(join(dir.path, 'bin'), { recursive: true });
    writeFileSync(join(dir.path, 'bin', 'vigil'), `#!/bin/sh\nexec ${process.execPath} ${CLI} "$@"\n`);
    chmodSync(join(dir.path, 'bin', 'vigil'), 0o755);

    // The setup authority, a browser account and a setup token.
    mkdirSync(join(dir.path, 'secrets'), { mode: 0o700 });
    const clockFile = join(dir.path, 'clock-offset');
    writeFileSync(clockFile, '0');
    const cfg = join(dir.path, 'authority.json');
    writeFileSync(cfg, JSON.stringify({
      server: { host: '127.0.0.1', port: 0 }, storage: { path: 'authority/store' }, accounts: { file: 'secrets/accounts.json' },
      recovery: { keyFile: 'authority-secrets/recovery.key', heartbeatTimeoutSeconds: 900, checkIntervalSeconds: 1 },
    }));
    const added = runCli(['setup-authority', 'account', 'add', 't-acme', 'alice', '--display-name', 'Alice', '--email', 'alice@example.test', '--config', cfg]);
    assert.equal(added.status, 0, added.stderr);
    const authority = startChild(['setup-authority', 'serve', '--config', cfg], { env: { VIGIL_TEST_CLOCK_FILE: clockFile } });
    children.push(authority);
    const url = await listeningUrl(authority);
    const call = await browser(url, JSON.parse(added.stdout).token);
    const created = await call('/v1/setup-sessions', 'POST');
    const tokenFile = join(dir.path, 'secrets', 'setup-token');
    writeFileSync(tokenFile, `${created.body.setup_token}\n`, { mode: 0o600 });

    // Three Linux VMs behind one sshd (each with its own prefix), a Windows VM and a VM kept out.
    const ssh = { address: '127.0.0.1', sshPort: sshd.port, sshUser: sshd.user };
    const inventory = join(dir.path, 'inventory.json');
    writeFileSync(inventory, JSON.stringify({ vms: [
      { id: 'vm-central', os: 'linux', tags: ['vigil:central'], ...ssh, sshHostKey: sshd.hostKey, prefix: vmRoot('vm-central') },
      { id: 'vm-web', os: 'linux', ...ssh, sshHostKey: sshd.hostKey, prefix: vmRoot('vm-web') },
      { id: 'vm-db', os: 'linux', ...ssh, prefix: vmRoot('vm-db') },
      { id: 'vm-win', os: 'windows', ...ssh, prefix: vmRoot('vm-win') },
      { id: 'vm-aaa', os: 'linux', install: false, ...ssh, prefix: vmRoot('vm-aaa') },
    ] }));
    const port = await freePort();
    const installer = startChild(installerArgs({ url, inventory, port, tokenFile }));
    children.push(installer);

    // The central instance, started from its unit's ExecStart once the installer installed it.
    await waitFor('the central VM installed', () => installedLine(installer, 'vm-central') || (installer.proc.exitCode !== null ? assert.fail(installer.output()) : undefined), 240_000);
    const viewer = runCli(['api-token-generate', 'test-viewer', 'viewer', '--config', onVm('vm-central', 'etc/vigil/vigil.config.json')]);
    assert.equal(viewer.status, 0, viewer.stderr);
    const viewerToken: string = JSON.parse(viewer.stdout).token;
    let central = startUnit('vm-central', 'vigil.service');
    const instanceUrl = `http://127.0.0.1:${port}`;
    await waitFor('the central instance', async () => (await fetch(`${instanceUrl}/health`).catch(() => undefined))?.status === 200 || (central.proc.exitCode !== null ? assert.fail(central.output()) : undefined), 120_000);

    await waitFor('both collectors installed', () => installedLine(installer, 'vm-web') && installedLine(installer, 'vm-db'), 240_000);
    for (const vm of ['vm-db', 'vm-web']) appendLog(vm, 'first');
    let collectors = ['vm-db', 'vm-web'].map((vm) => ({ vm, service: startUnit(vm, 'vigil-collector.service') }));
    assert.equal(await installer.exited, 75, `without a service manager the run stops for the services to be started: ${installer.output()}`);
    assert.equal(JSON.parse(installer.output().split('\n').filter((l) => l.includes('"sessionId"')).at(-1)!).status, 'awaiting_services');
    const resumed = startChild(resumeArgs(installerArgs({ url, inventory, port, tokenFile })));
    children.push(resumed);
    assert.equal(await resumed.exited, 0, resumed.output());
    const summary = JSON.parse(resumed.output().trim().split('\n').at(-1)!);
    assert.equal(summary.status, 'completed');

    // What the installer did and did not touch; the plan it showed; the host key it recorded.
    assert.equal(summary.centralVmId, 'vm-central');
    assert.deepEqual(summary.scope.vms, ['vm-central', 'vm-db', 'vm-web']);
    assert.deepEqual(summary.touched, ['vm-central', 'vm-db', 'vm-web']);
    assert.deepEqual(summary.notInstalled, [
      { vm: 'vm-aaa', os: 'linux', reason: 'marked not to install: left out of the scope, untouched' },
      { vm: 'vm-win', os: 'windows', reason: 'no collector for this OS yet: left out of the scope, untouched' },
    ]);
    assert.ok(!existsSync(vmRoot('vm-win')) && !existsSync(vmRoot('vm-aaa')), 'VMs out of scope are never touched');
    assert.match(installer.output(), /vm-win +windows .*no collector for this OS yet/);
    assert.doesNotMatch(installer.output(), /this is the orchestration host/, 'a loopback address is no evidence of the orchestration host');
    const recorded = installer.output().split('\n').filter((l) => l.includes('SSH host key recorded on first use')).map((l) => JSON.parse(l));
    assert.deepEqual(recorded.map((r) => [r.vm, r.fingerprint]), [['vm-db', sshd.hostKeyFingerprint]], 'only the unpinned VM is trusted on first use, and its key is shown');
    assert.ok(readFileSync(join(dir.path, 'work', 'known_hosts'), 'utf8').includes(`vigil-vm-vm-db ${sshd.hostKey}`));

    // Every file the installer wrote loads with the real loaders; secrets are 0600 in 0700 folders.
    const first = loadWrittenFiles('vm-central', ['vm-db', 'vm-web']);
    assert.deepEqual(first.agents.map((a) => [a.collectorId, a.server]), [['vm-db', instanceUrl], ['vm-web', instanceUrl]]);
    assert.equal(first.grants.enrollment_epoch, 1);

    // The units pass systemd-analyze verify (it runs without a running systemd).
    for (const [vm, unit] of [['vm-central', 'vigil.service'], ['vm-web', 'vigil-collector.service'], ['vm-db', 'vigil-collector.service']] as const) {
      const verified = spawnSync('systemd-analyze', ['verify', onVm(vm, `etc/systemd/system/${unit}`)], { encoding: 'utf8' });
      assert.equal(verified.status, 0, verified.stderr);
      assert.equal(verified.stderr.trim(), '', `${unit} verifies without warnings`);
    }

    // The collectors enroll and report; the session completes.
    for (const { vm } of collectors) await waitFor(`events from ${vm}`, async () => (await collectorEvents(instanceUrl, viewerToken, vm)).length > 0, 120_000);
    const status = await call(`/v1/setup-sessions/${summary.sessionId}`);
    assert.equal(status.body.status, 'completed');
    assert.equal(status.body.dashboard_url, `${instanceUrl}/`, 'the console at / of the central instance');
    const enrolledBefore = collectors.map(({ vm }) => JSON.parse(readFileSync(onVm(vm, 'var/lib/vigil-collector/enrollment.json'), 'utf8')));
    await waitFor('the dashboard showing both collectors enrolled in epoch 1', async () => {
      const cs = (await call(`/v1/setup-sessions/${summary.sessionId}`)).body.deployment.collectors as Array<{ enrolled: boolean; epoch: number }>;
      return cs.length === 2 && cs.every((c) => c.enrolled && c.epoch === 1) ? true : undefined;
    }, 120_000);

    // The central VM dies: central_missing, a recovery token, a recovery install over SSH.
    await stopService(central, 'SIGKILL');
    writeFileSync(clockFile, String(901_000));
    await waitFor('central_missing', async () => ((await call(`/v1/setup-sessions/${summary.sessionId}`)).body.deployment.status === 'central_missing' ? true : undefined), 120_000);
    writeFileSync(clockFile, '0');
    const revealed = await call(`/v1/deployments/${summary.deploymentId}/recovery-token/reveal`, 'POST');
    assert.match(revealed.body.recovery_token, /^lrc_/);
    const keyBefore = readFileSync(onVm('vm-central', 'etc/vigil/secrets/deployment-identity.key'), 'utf8');
    const recovery = startChild(installerArgs({ url, inventory, port, tokenFile: '-', recovery: true }), { input: `${revealed.body.recovery_token}\n` });
    children.push(recovery);
    await waitFor('the central VM reinstalled', () => installedLine(recovery, 'vm-central') || (recovery.proc.exitCode !== null ? assert.fail(recovery.output()) : undefined), 240_000);
    assert.notEqual(readFileSync(onVm('vm-central', 'etc/vigil/secrets/deployment-identity.key'), 'utf8'), keyBefore, 'a new identity key');
    const viewer2 = runCli(['api-token-generate', 'test-viewer-2', 'viewer', '--config', onVm('vm-central', 'etc/vigil/vigil.config.json')]);
    assert.equal(viewer2.status, 0, viewer2.stderr);
    const viewerToken2: string = JSON.parse(viewer2.stdout).token;
    central = startUnit('vm-central', 'vigil.service');
    // Every VM is switched right after the others once all staged: wait for the instance itself, not for the collectors.
    await waitFor('the reinstalled central instance', async () => (await fetch(`${instanceUrl}/health`).catch(() => undefined))?.status === 200 || (central.proc.exitCode !== null ? assert.fail(central.output()) : undefined), 120_000);
    await waitFor('both collectors reinstalled', () => installedLine(recovery, 'vm-web') && installedLine(recovery, 'vm-db'), 240_000);
    // Under systemd the installer restarts the collector units; here the test restarts the same ExecStart lines.
    for (const c of collectors) await stopService(c.service);
    const counts = new Map<string, number>();
    for (const { vm } of collectors) counts.set(vm, (await collectorEvents(instanceUrl, viewerToken2, vm)).length);
    collectors = collectors.map(({ vm }) => ({ vm, service: startUnit(vm, 'vigil-collector.service') }));
    for (const vm of ['vm-db', 'vm-web']) appendLog(vm, 'after-recovery');
    assert.equal(await recovery.exited, 75, recovery.output());
    const recoveryResumed = startChild(resumeArgs(installerArgs({ url, inventory, port, tokenFile: '-', recovery: true })));
    children.push(recoveryResumed);
    assert.equal(await recoveryResumed.exited, 0, recoveryResumed.output());
    const recovered = JSON.parse(recoveryResumed.output().trim().split('\n').at(-1)!);
    assert.equal(recovered.deploymentId, summary.deploymentId);
    assert.equal(recovered.enrollmentEpoch, 2);
    assert.match(recovery.output(), /^Recovery: the scope approved at the first install applies/m);

    const second = loadWrittenFiles('vm-central', ['vm-db', 'vm-web']);
    assert.equal(second.grants.enrollment_epoch, 2);
    assert.ok(!second.credentials.some((c) => first.credentials.some((f) => f.tokenHash === c.tokenHash && c.roles.includes('collector'))), 'the collectors got new bearer credentials');
    for (const [i, { vm }] of collectors.entries()) {
      await waitFor(`${vm} reporting again`, async () => (await collectorEvents(instanceUrl, viewerToken2, vm)).length > counts.get(vm)! ? true : undefined, 120_000);
      const enrolled = JSON.parse(readFileSync(onVm(vm, 'var/lib/vigil-collector/enrollment.json'), 'utf8'));
      assert.equal(enrolled.tokenSha256, hashToken(readFileSync(onVm(vm, 'etc/vigil/collector/secrets/enrollment-token'), 'utf8').trim()), `${vm} enrolled with the new epoch's token`);
      assert.notEqual(enrolled.keyFingerprint, enrolledBefore[i].keyFingerprint, `${vm} has a new key`);
    }
    const after = await call(`/v1/setup-sessions/${summary.sessionId}`);
    assert.ok(after.body.deployment.status_history.some((h: { status: string }) => h.status === 'recovered'));
    assert.equal(after.body.deployment.status, 'reporting');
    assert.equal(after.body.deployment.enrollment_epoch, 2);
    // The dashboard sees the whole fleet: every collector re-enrolled in epoch 2 and sending evidence since.
    type Shown = { vm_id: string; epoch: number; enrolled: boolean; enrolled_at: string; last_evidence_at: string | null; silent: boolean };
    const fleet = await waitFor('the dashboard showing every collector re-enrolled in epoch 2', async () => {
      const body = (await call(`/v1/setup-sessions/${summary.sessionId}`)).body;
      const cs = body.deployment.collectors as Shown[];
      return cs.length === 2 && cs.every((c) => c.enrolled && c.last_evidence_at !== null && c.last_evidence_at >= c.enrolled_at) ? body : undefined;
    }, 120_000);
    assert.deepEqual((fleet.deployment.collectors as Shown[]).map((c) => [c.vm_id, c.epoch, c.silent]), [['vm-db', 2, false], ['vm-web', 2, false]]);
    assert.deepEqual(fleet.deployment.collectors_waiting, []);
    assert.ok(fleet.deployment.systems_reporting_live >= 3, 'the central instance and both collectors report');

    await stopService(central);
    for (const c of collectors) await stopService(c.service);
  });
});
