import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { STAGED_SUFFIX } from '../../src/clients/installer/stage.js';
import { CLI, runCli } from '../helpers/cli.js';
import { resumeArgs } from '../setup/install-run.js';
import { freePort, listeningUrl, startChild, waitFor, type Child } from '../setup/processes.js';

/*
 * The fail-safe cases of `vigil install` (issue 62), shared by fail-safe.test.ts (three VMs as prefixes behind one
 * loopback sshd) and fail-safe-netns.test.ts (three VMs as network namespaces, each with its own sshd): the same
 * steps and assertions, only the way each VM is reached differs. Each VM's files land under its own prefix in
 * `<dir>/vms/<vm>` either way.
 */

/** How the installer reaches one VM over SSH. */
export interface FailSafeVm {
  readonly id: string;
  readonly address: string;
  readonly sshPort: number;
  readonly sshUser: string;
  /** The VM's sshd host key (OpenSSH public key line), pinned in the inventory unless a case leaves it out. */
  readonly hostKey: string;
}

/** Every regular file under `root` with its SHA-256, staged leftovers aside (they are not what runs). */
export function liveFiles(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && !p.endsWith(STAGED_SUFFIX) && !p.endsWith('.vigil-new')) out[relative(root, p)] = createHash('sha256').update(readFileSync(p)).digest('hex');
    }
  };
  walk(root);
  return out;
}

export async function browser(url: string, token: string) {
  const r = await fetch(`${url}/v1/browser-sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const body = (await r.json()) as { csrf_token: string };
  const cookie = /^(vigil-setup=[^;]+)/.exec(r.headers.get('set-cookie') ?? '')![1]!;
  return async (path: string, method = 'GET') => {
    const res = await fetch(`${url}${path}`, { method, headers: { cookie, 'x-csrf-token': body.csrf_token, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, ...(method === 'POST' ? { body: '{}' } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };
}

/** Runs `vigil ...argv` without blocking the event loop (a blocked loop lets fetch reuse a socket the server closed). */
export function vigil(argv: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [CLI, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => { stdout += c.toString(); });
  proc.stderr.on('data', (c: Buffer) => { stderr += c.toString(); });
  return new Promise((resolve) => proc.once('close', (status) => resolve({ status, stdout, stderr })));
}

export const lastJson = (output: string) => JSON.parse(output.split('\n').filter((l) => l.includes('"sessionId"') || l.includes('"msg":"abandoned"')).at(-1)!);

/** The `msg: "check"` lines of a `--check` run's stdout. */
export const checkLines = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l)).filter((l) => l.msg === 'check');

/** A real authority, a browser account, and a live deployment installed on `vms` (all pinned); its files hashed. */
export async function startFailSafe(o: { dir: string; vms: readonly FailSafeVm[]; sshKey: string; children: Child[] }) {
  const { dir, children } = o;
  const vmRoot = (vm: string) => join(dir, 'vms', vm);
  mkdirSync(join(dir, 'secrets'), { mode: 0o700 });
  const cfg = join(dir, 'authority.json');
  writeFileSync(cfg, JSON.stringify({ server: { host: '127.0.0.1', port: 0 }, storage: { path: 'authority/store' }, accounts: { file: 'secrets/accounts.json' }, recovery: { keyFile: 'authority-secrets/recovery.key' } }));
  const added = runCli(['setup-authority', 'account', 'add', 't-acme', 'alice', '--email', 'alice@example.test', '--config', cfg]);
  assert.equal(added.status, 0, added.stderr);
  const authority = startChild(['setup-authority', 'serve', '--config', cfg]);
  children.push(authority);
  const url = await listeningUrl(authority);
  const call = await browser(url, JSON.parse(added.stdout).token);
  const newToken = async (name: string) => {
    const created = await call('/v1/setup-sessions', 'POST');
    const file = join(dir, 'secrets', name);
    writeFileSync(file, `${created.body.setup_token}\n`, { mode: 0o600 });
    return { file, sessionId: created.body.session_id as string, token: created.body.setup_token as string };
  };
  /** The inventory `name`: every VM pinned to its own host key, as `edit` leaves it (drop `sshHostKey` to unpin). */
  const inventory = (name = 'pinned', edit: (vm: Record<string, unknown>) => Record<string, unknown> = (vm) => vm) => {
    const path = join(dir, `inventory-${name}.json`);
    writeFileSync(path, JSON.stringify({ vms: o.vms.map((vm) => edit({ id: vm.id, os: 'linux', address: vm.address, sshPort: vm.sshPort, sshUser: vm.sshUser, prefix: vmRoot(vm.id), ...(vm.id === 'vm-central' ? { tags: ['vigil:central'] } : {}), sshHostKey: vm.hostKey })) }));
    return path;
  };
  const unpin = (vmId: string) => (vm: Record<string, unknown>) => { if (vm.id !== vmId) return vm; const { sshHostKey: _, ...rest } = vm; return rest; };
  const port = await freePort();
  const args = (a: { token: string; work: string; inventory: string; setupUrl?: string }) => [
    'install', '--setup-url', a.setupUrl ?? url, '--token-file', a.token, '--inventory', a.inventory, '--transport', 'ssh', '--ssh-key', o.sshKey,
    '--yes', '--service-manager', 'none', '--work-dir', join(dir, a.work), '--central-listen', `127.0.0.1:${port}`, '--wait-seconds', '1',
  ];

  // The live deployment: files in place on the three VMs (the operator would start its services now).
  const live = await newToken('token-live');
  const first = await vigil(args({ token: live.file, work: 'work-live', inventory: inventory() }));
  assert.equal(first.status, 75, first.stderr);
  const liveDeployment = lastJson(first.stdout).deploymentId as string;
  const before = liveFiles(vmRoot(''));
  assert.ok(Object.keys(before).length >= 15, 'the live deployment has its files');
  return { dir, url, call, newToken, inventory, unpin, args, vmRoot, liveDeployment, before, children, firstRun: first, liveFiles: () => liveFiles(vmRoot('')) };
}

export type FailSafe = Awaited<ReturnType<typeof startFailSafe>>;

/** `--check` catches an unpinned host key (vm-db) and a dead authority; `install` refuses to claim; the token still claims. */
export async function checksBeforeClaim(f: FailSafe): Promise<void> {
  const second = await f.newToken('token-second');
  const unpinned = await vigil([...f.args({ token: second.file, work: 'work-second', inventory: f.inventory('unpinned', f.unpin('vm-db')) }), '--check']);
  assert.equal(unpinned.status, 1, unpinned.stderr);
  const checks = checkLines(unpinned.stdout);
  assert.deepEqual(checks.filter((c) => c.status === 'fail').map((c) => [c.check, c.vm]), [['ssh', 'vm-db']]);
  assert.match(checks.find((c) => c.status === 'fail').detail, /no pinned SSH host key/);
  assert.ok(checks.some((c) => c.check === 'node' && c.vm === 'vm-central' && c.status === 'pass'), 'the VM\'s Node.js is checked');
  assert.ok(checks.some((c) => c.check === 'ports' && c.vm === 'vm-central' && c.status === 'pass'));
  assert.match(unpinned.stderr, /^check +vm +result +detail$/m, 'a table on stderr');
  const noInventory = await vigil([...f.args({ token: second.file, work: 'work-dead', inventory: join(f.dir, 'missing.json') }), '--check']);
  assert.equal(noInventory.status, 1);
  assert.match(noInventory.stdout, /"check":"discovery","status":"fail","detail":"cannot read inventory/);
  const dead = await vigil([...f.args({ token: second.file, work: 'work-dead', inventory: f.inventory(), setupUrl: `http://127.0.0.1:${await freePort()}` }), '--check']);
  assert.equal(dead.status, 1);
  assert.match(dead.stdout, /"check":"authority","status":"fail","detail":"unreachable/);
  const refused = await vigil(f.args({ token: second.file, work: 'work-second', inventory: f.inventory('unpinned', f.unpin('vm-db')) }));
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /install stopped: 1 check failed: ssh on vm-db/);
  assert.equal((await f.call(`/v1/setup-sessions/${second.sessionId}`)).body.status, 'created', 'the token was not spent');
  assert.deepEqual(f.liveFiles(), f.before);
  const passing = await vigil([...f.args({ token: second.file, work: 'work-second', inventory: f.inventory() }), '--check']);
  assert.equal(passing.status, 0, passing.stdout);
  const claimable = await fetch(`${f.url}/v1/setup-sessions/connect`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ setup_token: second.token }) });
  assert.equal(claimable.status, 200, 'after every check the token still claims');
}

/** A run killed while staging (vm-web's first staged file is a FIFO nobody reads, so the run hangs there). */
async function killedRun(f: FailSafe, name: string) {
  const trap = join(f.vmRoot('vm-web'), `etc/vigil/fleet-bootstrap.pub${STAGED_SUFFIX}.vigil-new`);
  const t = await f.newToken(name);
  assert.equal(spawnSync('mkfifo', [trap]).status, 0);
  const run = startChild(f.args({ token: t.file, work: `work-${name}`, inventory: f.inventory() }));
  f.children.push(run);
  const stateFile = join(f.dir, `work-${name}`, 'install-state.json');
  const state = await waitFor('vm-db staged', () => (existsSync(stateFile) && JSON.parse(readFileSync(stateFile, 'utf8')).vms['vm-db'] === 'staged' ? JSON.parse(readFileSync(stateFile, 'utf8')) : undefined), 120_000);
  run.proc.kill('SIGKILL');
  await run.exited;
  rmSync(trap);
  assert.equal(statSync(stateFile).mode & 0o777, 0o600);
  assert.equal(statSync(join(f.dir, `work-${name}`)).mode & 0o777, 0o700);
  assert.ok(existsSync(join(f.dir, `work-${name}`, `${state.deploymentId}.console-credential.json`)), 'the console credential is kept as soon as it exists');
  assert.ok(existsSync(join(f.vmRoot('vm-central'), `etc/vigil/vigil.config.json${STAGED_SUFFIX}`)), 'the central VM was staged');
  assert.deepEqual(f.liveFiles(), f.before, 'nothing live was switched');
  return { ...t, state, work: `work-${name}` };
}

/** A run killed mid-way, then abandoned with `--abandon` (a reason required): recorded, and it no longer resumes. */
export async function killedThenAbandoned(f: FailSafe): Promise<void> {
  const abandoned = await killedRun(f, 'token-abandon');
  const noReason = await vigil(['install', '--abandon', '--work-dir', join(f.dir, abandoned.work)]);
  assert.equal(noReason.status, 2);
  const gaveUp = await vigil(['install', '--abandon', '--work-dir', join(f.dir, abandoned.work), '--reason', 'killed while staging']);
  assert.equal(gaveUp.status, 0, gaveUp.stderr);
  assert.equal(lastJson(gaveUp.stdout).status, 'abandoned');
  const status = await f.call(`/v1/setup-sessions/${abandoned.state.sessionId}`);
  assert.equal(status.body.deployment.status, 'abandoned');
  assert.equal((await vigil(resumeArgs(f.args({ token: abandoned.file, work: abandoned.work, inventory: f.inventory() })))).status, 1, 'an abandoned run does not resume');
  assert.deepEqual(f.liveFiles(), f.before);
}

/** A run killed mid-way, then resumed with `--resume` in the same session: switched into place once every VM staged. */
export async function killedThenResumed(f: FailSafe): Promise<void> {
  const resumed = await killedRun(f, 'token-resume');
  const again = await vigil(resumeArgs(f.args({ token: resumed.file, work: resumed.work, inventory: f.inventory() })));
  assert.equal(again.status, 75, again.stderr);
  const summary = lastJson(again.stdout);
  assert.deepEqual([summary.sessionId, summary.deploymentId, summary.status], [resumed.state.sessionId, resumed.state.deploymentId, 'awaiting_services'], 'the same session, no new token');
  const config = JSON.parse(readFileSync(join(f.vmRoot('vm-central'), 'etc/vigil/vigil.config.json'), 'utf8'));
  assert.equal(config.deployment.deploymentId, resumed.state.deploymentId, 'switched into place once every VM staged');
  assert.notEqual(config.deployment.deploymentId, f.liveDeployment);
  const waited = await vigil(resumeArgs(f.args({ token: resumed.file, work: resumed.work, inventory: f.inventory() })));
  assert.equal(waited.status, 75, 'a short wait without a snapshot leaves a resumable state');
  assert.match(waited.stderr, /No snapshot from the central instance yet/);
  assert.equal(lastJson(waited.stdout).status, 'awaiting_snapshot');
}
