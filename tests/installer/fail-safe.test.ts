import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { STAGED_SUFFIX } from '../../src/clients/installer/stage.js';
import { CLI, runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { resumeArgs } from '../setup/install-run.js';
import { freePort, listeningUrl, startChild, stopChild, waitFor, type Child } from '../setup/processes.js';
import { startSshd, type TestSshd } from './sshd.js';

/*
 * The VMs are three prefixes behind one loopback sshd (as in deploy-over-ssh.test.ts), not network namespaces: the
 * failures injected here (an unpinned host key, a dead authority, a run killed while staging, then resumed or
 * abandoned) do not depend on separate network stacks. A VM without sudo is covered in preflight.test.ts.
 */

const dir = tempDir('vigil-fail-safe-');
const children: Child[] = [];
let sshd: TestSshd | undefined;
const vmRoot = (vm: string) => join(dir.path, 'vms', vm);
const VMS = ['vm-central', 'vm-db', 'vm-web'];

/** Every regular file on the VMs with its SHA-256, staged leftovers aside (they are not what runs). */
function liveFiles(): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !p.endsWith(STAGED_SUFFIX) && !p.endsWith('.vigil-new')) out[relative(vmRoot(''), p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(vmRoot(''));
  return out;
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

/** Runs `vigil ...argv` without blocking the event loop (a blocked loop lets fetch reuse a socket the server closed). */
function vigil(argv: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  proc.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => proc.once('close', (status) => resolve({ status, stdout, stderr })));
}

const lastJson = (output: string) => JSON.parse(output.split('\n').filter((l) => l.includes('"sessionId"') || l.includes('"msg":"abandoned"')).at(-1)!);

describe('an install that fails is caught before the claim, or resumed, or abandoned, with no live file changed', () => {
  after(async () => {
    for (const c of children) await stopChild(c);
    await sshd?.stop();
    dir.cleanup();
  });

  it('checks without spending the token, stages before switching, resumes the same session, abandons on record', { timeout: 600_000 }, async () => {
    sshd = await startSshd(join(dir.path, 'sshd'), await freePort());
    mkdirSync(join(dir.path, 'secrets'), { mode: 0o700 });
    const cfg = join(dir.path, 'authority.json');
    writeFileSync(cfg, JSON.stringify({ server: { host: '127.0.0.1', port: 0 }, storage: { path: 'authority/store' }, accounts: { file: 'secrets/accounts.json' }, recovery: { keyFile: 'authority-secrets/recovery.key' } }));
    const added = runCli(['setup-authority', 'account', 'add', 't-acme', 'alice', '--email', 'alice@example.test', '--config', cfg]);
    assert.equal(added.status, 0, added.stderr);
    const authority = startChild(['setup-authority', 'serve', '--config', cfg]);
    children.push(authority);
    const url = await listeningUrl(authority);
    const call = await browser(url, JSON.parse(added.stdout).token);
    const newToken = async (name: string) => {
      const created = await call('/v1/setup-sessions', 'POST');
      const file = join(dir.path, 'secrets', name);
      writeFileSync(file, `${created.body.setup_token}\n`, { mode: 0o600 });
      return { file, sessionId: created.body.session_id as string, token: created.body.setup_token as string };
    };
    const ssh = { address: '127.0.0.1', sshPort: sshd.port, sshUser: sshd.user };
    const inventory = (pinDb: boolean) => {
      const path = join(dir.path, `inventory-${pinDb ? 'pinned' : 'unpinned'}.json`);
      writeFileSync(path, JSON.stringify({ vms: VMS.map((id) => ({ id, os: 'linux', ...ssh, prefix: vmRoot(id), ...(id === 'vm-central' ? { tags: ['vigil:central'] } : {}), ...(pinDb || id !== 'vm-db' ? { sshHostKey: sshd!.hostKey } : {}) })) }));
      return path;
    };
    const port = await freePort();
    const args = (o: { token: string; work: string; inventory: string; setupUrl?: string }) => [
      'install', '--setup-url', o.setupUrl ?? url, '--token-file', o.token, '--inventory', o.inventory, '--transport', 'ssh', '--ssh-key', sshd!.userKeyFile,
      '--yes', '--service-manager', 'none', '--work-dir', join(dir.path, o.work), '--central-listen', `127.0.0.1:${port}`, '--wait-seconds', '1',
    ];

    // The live deployment: files in place on the three VMs (the operator would start its services now).
    const live = await newToken('token-live');
    const first = await vigil(args({ token: live.file, work: 'work-live', inventory: inventory(true) }));
    assert.equal(first.status, 75, first.stderr);
    const liveDeployment = lastJson(first.stdout).deploymentId as string;
    const before = liveFiles();
    assert.ok(Object.keys(before).length >= 15, 'the live deployment has its files');

    // --check: an unpinned host key and a dead authority are caught; nothing is claimed.
    const second = await newToken('token-second');
    const unpinned = await vigil([...args({ token: second.file, work: 'work-second', inventory: inventory(false) }), '--check']);
    assert.equal(unpinned.status, 1, unpinned.stderr);
    const checks = unpinned.stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.msg === 'check');
    assert.deepEqual(checks.filter((c) => c.status === 'fail').map((c) => [c.check, c.vm]), [['ssh', 'vm-db']]);
    assert.match(checks.find((c) => c.status === 'fail').detail, /no pinned SSH host key/);
    assert.ok(checks.some((c) => c.check === 'node' && c.vm === 'vm-central' && c.status === 'pass'), 'the VM\'s Node.js is checked');
    assert.ok(checks.some((c) => c.check === 'ports' && c.vm === 'vm-central' && c.status === 'pass'));
    assert.match(unpinned.stderr, /^check +vm +result +detail$/m, 'a table on stderr');
    const noInventory = await vigil([...args({ token: second.file, work: 'work-dead', inventory: join(dir.path, 'missing.json') }), '--check']);
    assert.equal(noInventory.status, 1);
    assert.match(noInventory.stdout, /"check":"discovery","status":"fail","detail":"cannot read inventory/);
    const dead = await vigil([...args({ token: second.file, work: 'work-dead', inventory: inventory(true), setupUrl: `http://127.0.0.1:${await freePort()}` }), '--check']);
    assert.equal(dead.status, 1);
    assert.match(dead.stdout, /"check":"authority","status":"fail","detail":"unreachable/);
    const refused = await vigil(args({ token: second.file, work: 'work-second', inventory: inventory(false) }));
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /install stopped: 1 check failed: ssh on vm-db/);
    assert.equal((await call(`/v1/setup-sessions/${second.sessionId}`)).body.status, 'created', 'the token was not spent');
    assert.deepEqual(liveFiles(), before);
    const passing = await vigil([...args({ token: second.file, work: 'work-second', inventory: inventory(true) }), '--check']);
    assert.equal(passing.status, 0, passing.stdout);
    const claimable = await fetch(`${url}/v1/setup-sessions/connect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ setup_token: second.token }) });
    assert.equal(claimable.status, 200, 'after every check the token still claims');

    // A run killed while staging (vm-web's first staged file is a FIFO nobody reads, so the run hangs there).
    const trap = join(vmRoot('vm-web'), `etc/vigil/fleet-bootstrap.pub${STAGED_SUFFIX}.vigil-new`);
    const killedRun = async (name: string) => {
      const t = await newToken(name);
      assert.equal(spawnSync('mkfifo', [trap]).status, 0);
      const run = startChild(args({ token: t.file, work: `work-${name}`, inventory: inventory(true) }));
      children.push(run);
      const stateFile = join(dir.path, `work-${name}`, 'install-state.json');
      const state = await waitFor('vm-db staged', () => (existsSync(stateFile) && JSON.parse(readFileSync(stateFile, 'utf8')).vms['vm-db'] === 'staged' ? JSON.parse(readFileSync(stateFile, 'utf8')) : undefined), 120_000);
      run.proc.kill('SIGKILL');
      await run.exited;
      rmSync(trap);
      assert.equal(statSync(stateFile).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir.path, `work-${name}`)).mode & 0o777, 0o700);
      assert.ok(existsSync(join(dir.path, `work-${name}`, `${state.deploymentId}.console-credential.json`)), 'the console credential is kept as soon as it exists');
      assert.ok(existsSync(join(vmRoot('vm-central'), `etc/vigil/vigil.config.json${STAGED_SUFFIX}`)), 'the central VM was staged');
      assert.deepEqual(liveFiles(), before, 'nothing live was switched');
      return { ...t, state, work: `work-${name}` };
    };

    const abandoned = await killedRun('token-abandon');
    const noReason = await vigil(['install', '--abandon', '--work-dir', join(dir.path, abandoned.work)]);
    assert.equal(noReason.status, 2);
    const gaveUp = await vigil(['install', '--abandon', '--work-dir', join(dir.path, abandoned.work), '--reason', 'killed while staging']);
    assert.equal(gaveUp.status, 0, gaveUp.stderr);
    assert.equal(lastJson(gaveUp.stdout).status, 'abandoned');
    const status = await call(`/v1/setup-sessions/${abandoned.state.sessionId}`);
    assert.equal(status.body.deployment.status, 'abandoned');
    assert.equal((await vigil(resumeArgs(args({ token: abandoned.file, work: abandoned.work, inventory: inventory(true) })))).status, 1, 'an abandoned run does not resume');
    assert.deepEqual(liveFiles(), before);

    const resumed = await killedRun('token-resume');
    const again = await vigil(resumeArgs(args({ token: resumed.file, work: resumed.work, inventory: inventory(true) })));
    assert.equal(again.status, 75, again.stderr);
    const summary = lastJson(again.stdout);
    assert.deepEqual([summary.sessionId, summary.deploymentId, summary.status], [resumed.state.sessionId, resumed.state.deploymentId, 'awaiting_services'], 'the same session, no new token');
    const config = JSON.parse(readFileSync(join(vmRoot('vm-central'), 'etc/vigil/vigil.config.json'), 'utf8'));
    assert.equal(config.deployment.deploymentId, resumed.state.deploymentId, 'switched into place once every VM staged');
    assert.notEqual(config.deployment.deploymentId, liveDeployment);
    const waited = await vigil(resumeArgs(args({ token: resumed.file, work: resumed.work, inventory: inventory(true) })));
    assert.equal(waited.status, 75, 'a short wait without a snapshot leaves a resumable state');
    assert.match(waited.stderr, /No snapshot from the central instance yet/);
    assert.equal(lastJson(waited.stdout).status, 'awaiting_snapshot');
  });
});
