import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers/temp.js';
import { stopChild, type Child } from '../setup/processes.js';
import { checkLines, checksBeforeClaim, killedThenAbandoned, killedThenResumed, startFailSafe, vigil, type FailSafe } from './fail-safe-cases.js';
import { makeNamespaces, namespacesUnavailable, type TestNamespaces } from './netns.js';
import { startSshd, type TestSshd } from './sshd.js';

/*
 * The fail-safe cases of fail-safe.test.ts with each VM a network namespace (`ip netns`, a veth pair to the root
 * namespace) running its own sshd with its own host key on its own address, each pinned separately; the installer
 * and the authority run in the root namespace. Namespaces isolate the network only, not the file system: each VM's
 * files still land under its own prefix (`<dir>/vms/<vm>`), and the commands the installer runs there see the same
 * files as the test. A VM without sudo is a non-root user made with `useradd` who may log in to that VM's sshd only.
 */

const unavailable = namespacesUnavailable();
const dir = tempDir('vigil-fail-safe-netns-');
const children: Child[] = [];
const sshds: TestSshd[] = [];
let spaces: TestNamespaces | undefined;
let f: FailSafe | undefined;
/** The user without sudo, when `useradd` works here (removed in `after`). */
let noSudoUser: string | undefined;
let noSudoProblem: string | undefined;

/** Removes users `vigilt<pid>` left by a test process that was killed before its `after` ran. */
function removeLeftoverUsers(): void {
  for (const m of spawnSync('getent', ['passwd'], { encoding: 'utf8' }).stdout.matchAll(/^vigilt(\d+):/gm)) {
    let alive = true;
    try { process.kill(Number(m[1]), 0); } catch (e) { alive = (e as NodeJS.ErrnoException).code === 'EPERM'; }
    if (!alive) spawnSync('userdel', ['--remove', `vigilt${m[1]}`]);
  }
}

function addNoSudoUser(publicKey: string): void {
  removeLeftoverUsers();
  const name = `vigilt${process.pid}`;
  const added = spawnSync('useradd', ['--create-home', '--shell', '/bin/sh', '--password', '*', name], { encoding: 'utf8' });
  if (added.status !== 0) { noSudoProblem = `useradd failed: ${added.stderr || added.error}`; return; }
  noSudoUser = name;
  // '*' rather than useradd's default '!': sshd without PAM refuses a locked account even for a key.
  const home = spawnSync('getent', ['passwd', name], { encoding: 'utf8' }).stdout.split(':')[5]!;
  const uid = Number(spawnSync('id', ['-u', name], { encoding: 'utf8' }).stdout);
  const gid = Number(spawnSync('id', ['-g', name], { encoding: 'utf8' }).stdout);
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(home, '.ssh', 'authorized_keys'), publicKey, { mode: 0o600 });
  chownSync(join(home, '.ssh'), uid, gid);
  chownSync(join(home, '.ssh', 'authorized_keys'), uid, gid);
}

describe('the fail-safe cases with each VM a network namespace with its own sshd', { skip: unavailable }, () => {
  after(async () => {
    for (const c of children) await stopChild(c);
    for (const s of sshds) await s.stop();
    spaces?.cleanup();
    if (noSudoUser !== undefined) spawnSync('userdel', ['--remove', noSudoUser], { encoding: 'utf8' });
    dir.cleanup();
  });

  it('checks before the claim, then a run killed mid-way abandoned and another resumed, no live file changed', { timeout: 600_000 }, async () => {
    const ids = ['vm-central', 'vm-db', 'vm-web'];
    spaces = makeNamespaces(ids.length);
    const sshKey = join(dir.path, 'installer-key');
    assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'vigil-test', '-f', sshKey]).status, 0);
    if (spawnSync('which', ['useradd']).status === 0) addNoSudoUser(readFileSync(`${sshKey}.pub`, 'utf8'));
    else noSudoProblem = 'no useradd here';
    for (const [i, ns] of spaces.namespaces.entries()) {
      sshds.push(await startSshd(join(dir.path, `sshd-${ids[i]}`), 22, { netns: ns.name, listenAddress: ns.address, userKeyFile: sshKey, extraUsers: noSudoUser ? [noSudoUser] : [] }));
    }
    assert.equal(new Set(sshds.map((s) => s.hostKey)).size, ids.length, 'every VM has its own host key');
    assert.equal(new Set(sshds.map((s) => s.address)).size, ids.length, 'and its own address');
    const vms = ids.map((id, i) => ({ id, address: sshds[i]!.address, sshPort: 22, sshUser: sshds[i]!.user, hostKey: sshds[i]!.hostKey }));
    f = await startFailSafe({ dir: dir.path, vms, sshKey, children });
    assert.doesNotMatch(f.firstRun.stdout + f.firstRun.stderr, /this is the orchestration host/, 'a namespace address is not this host');

    // Each VM is pinned separately: vm-web's key pinned for vm-db is refused before anything is claimed.
    const t = await f.newToken('token-wrong-pin');
    const wrongPin = await vigil([...f.args({ token: t.file, work: 'work-wrong-pin', inventory: f.inventory('wrong-pin', (vm) => (vm.id === 'vm-db' ? { ...vm, sshHostKey: sshds[2]!.hostKey } : vm)) }), '--check']);
    assert.equal(wrongPin.status, 1, wrongPin.stderr);
    const sshChecks = checkLines(wrongPin.stdout).filter((c) => c.check === 'ssh');
    assert.deepEqual(checkLines(wrongPin.stdout).filter((c) => c.status === 'fail').map((c) => [c.check, c.vm]), [['ssh', 'vm-db']], wrongPin.stdout);
    assert.ok(sshChecks.find((c) => c.vm === 'vm-db').detail.includes(sshds[1]!.hostKeyFingerprint), 'ssh names the key vm-db really sent');
    for (const vm of [vms[0]!, vms[2]!]) assert.equal(sshChecks.find((c) => c.vm === vm.id).detail, `reached ${vm.sshUser}@${vm.address}`, 'each VM reached at its own address');
    assert.equal((await f.call(`/v1/setup-sessions/${t.sessionId}`)).body.status, 'created', 'the token was not spent');

    await checksBeforeClaim(f);
    await killedThenAbandoned(f);
    await killedThenResumed(f);
  });

  it('stops before the claim when a VM\'s login user has no sudo', { timeout: 300_000 }, async (t) => {
    if (f === undefined) return t.skip('the deployment above did not start');
    if (noSudoUser === undefined) return t.skip(`no user without sudo: ${noSudoProblem}`);
    const before = f.liveFiles();
    const token = await f.newToken('token-no-sudo');
    const user = noSudoUser;
    const args = f.args({ token: token.file, work: 'work-no-sudo', inventory: f.inventory('no-sudo', (vm) => (vm.id === 'vm-db' ? { ...vm, sshUser: user } : vm)) });
    const noSudo = await vigil([...args, '--check']);
    assert.equal(noSudo.status, 1, noSudo.stderr);
    const failedChecks = checkLines(noSudo.stdout).filter((c) => c.status === 'fail');
    assert.deepEqual(failedChecks.map((c) => [c.check, c.vm]), [['privileges', 'vm-db']], noSudo.stdout);
    assert.match(failedChecks[0].detail, new RegExp(`${user} is not root and sudo -n true fails`));
    const refused = await vigil(args);
    assert.equal(refused.status, 1, refused.stderr);
    assert.match(refused.stderr, /install stopped: 1 check failed: privileges on vm-db/);
    assert.equal((await f.call(`/v1/setup-sessions/${token.sessionId}`)).body.status, 'created', 'the token was not spent');
    assert.deepEqual(f.liveFiles(), before);
  });
});
