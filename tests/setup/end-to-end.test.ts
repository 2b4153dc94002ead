import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { enrollmentRedeemer } from './enrollment-signing.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { installAndServe as runInstaller, writeInventory } from './install-run.js';
import { freePort, listeningUrl, startChild, stopChild, waitFor, type Child } from './processes.js';
import { startSmtpServer } from './smtp.js';

const dir = tempDir('vigil-setup-e2e-');
const children: Child[] = [];
const vms = join(dir.path, 'vms');
const file = (vm: string, path: string) => join(vms, vm, path);

const inventory = (extra: object[] = []) => writeInventory(dir.path, extra);

async function browser(url: string, token: string) {
  const r = await fetch(`${url}/v1/browser-sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  const body = (await r.json()) as { csrf_token: string };
  const cookie = /^(vigil-setup=[^;]+)/.exec(r.headers.get('set-cookie') ?? '')![1]!;
  const call = async (path: string, method = 'GET') => {
    const res = await fetch(`${url}${path}`, { method, headers: { cookie, 'x-csrf-token': body.csrf_token, ...(method === 'POST' ? { 'content-type': 'application/json' } : {}) }, ...(method === 'POST' ? { body: '{}' } : {}) });
    return { status: res.status, body: (await res.json()) as any };
  };
  return Object.assign(call, { cookie });
}

/** Enrolls a collector with the central instance at `port` using the token the installer left on its VM, as the agent does. */
async function enrollAtInstance(port: number, vm: string): Promise<number> {
  const enrollmentToken = readFileSync(file(vm, 'etc/vigil/collector/secrets/enrollment-token'), 'utf8').trim();
  const publicKey = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/collector/enrollments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ collectorId: vm, enrollmentToken, publicKey }) });
  return res.status;
}

/** The collectors of the session's deployment as the dashboard's JSON shows them: [vm, enrolled, epoch]. */
type Shown = Array<[string, boolean, number]>;
const shown = (body: any): Shown => body.deployment.collectors.map((c: { vm_id: string; enrolled: boolean; epoch: number }) => [c.vm_id, c.enrolled, c.epoch]);

const installAndServe = (args: string[], input: string | undefined, keyBefore: string | undefined) => runInstaller(vms, args, input, keyBefore, children);

describe('setup authority, installer and instance end to end', () => {
  after(async () => {
    for (const c of children) await stopChild(c);
    dir.cleanup();
  });

  it('provisions, reports, goes central_missing, e-mails, recovers, and refuses the old enrollments', async () => {
    const smtp = await startSmtpServer();
    mkdirSync(join(dir.path, 'secrets'), { mode: 0o700 });
    const clockFile = join(dir.path, 'clock-offset');
    writeFileSync(clockFile, '0');
    const cfg = join(dir.path, 'authority.json');
    writeFileSync(cfg, JSON.stringify({
      server: { host: '127.0.0.1', port: 0 }, storage: { path: 'authority-store' }, accounts: { file: 'secrets/accounts.json' },
      recovery: { keyFile: 'secrets/recovery.key', heartbeatTimeoutSeconds: 900, checkIntervalSeconds: 1 },
      email: { from: 'vigil@authority.test', smtp: { host: '127.0.0.1', port: smtp.port } },
    }));
    const added = runCli(['setup-authority', 'account', 'add', 't-acme', 'alice', '--display-name', 'Alice', '--email', 'alice@example.test', '--config', cfg]);
    assert.equal(added.status, 0, added.stderr);
    const accountToken = JSON.parse(added.stdout).token as string;
    const authority = startChild(['setup-authority', 'serve', '--config', cfg], { env: { VIGIL_TEST_CLOCK_FILE: clockFile } });
    children.push(authority);
    const url = await listeningUrl(authority);
    const call = await browser(url, accountToken);
    const created = await call('/v1/setup-sessions', 'POST');
    assert.equal(created.status, 201);
    const tokenFile = join(dir.path, 'secrets', 'setup-token');
    writeFileSync(tokenFile, `${created.body.setup_token}\n`, { mode: 0o600 });
    const port = await freePort();
    const common = ['--setup-url', url, '--yes', '--transport', `directory:${vms}`, '--work-dir', join(dir.path, 'work'), '--central-listen', `127.0.0.1:${port}`, '--snapshot-interval', '1', '--wait-seconds', '60'];

    const first = await installAndServe(['install', '--token-file', tokenFile, '--inventory', inventory(), ...common], undefined, undefined);
    assert.equal(await first.installer.exited, 0, first.installer.output());
    const summary = JSON.parse(first.installer.output().trim().split('\n').at(-1)!);
    assert.equal(summary.centralVmId, 'vm-central', 'the tagged Linux VM is central');
    assert.deepEqual(summary.touched, ['vm-central', 'vm-db', 'vm-web']);
    assert.ok(!existsSync(join(vms, 'vm-aaa')), 'a VM outside the scope is never touched');
    const status = await call(`/v1/setup-sessions/${summary.sessionId}`);
    assert.equal(status.body.status, 'completed');
    assert.equal(status.body.dashboard_url, `http://127.0.0.1:${port}/`);
    assert.ok(status.body.deployment.systems_reporting_live >= 1);

    const deploymentId: string = summary.deploymentId;
    const oldWeb = readFileSync(file('vm-web', 'etc/vigil/collector/secrets/enrollment-token'), 'utf8').trim();
    const oldDb = readFileSync(file('vm-db', 'etc/vigil/collector/secrets/enrollment-token'), 'utf8').trim();
    const oldKey = createPrivateKey(readFileSync(file('vm-central', 'etc/vigil/secrets/deployment-identity.key'), 'utf8'));
    const collectorKey = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const redeem = enrollmentRedeemer(url, deploymentId);
    assert.equal((await redeem(oldKey, 'vm-web', oldWeb, collectorKey)).status, 201, 'the first enrollment is honoured');
    // The collectors enroll with the instance; its next snapshot tells the dashboard.
    assert.equal(await enrollAtInstance(port, 'vm-db'), 201);
    assert.equal(await enrollAtInstance(port, 'vm-web'), 201);
    await waitFor('both collectors enrolled in epoch 1 on the dashboard', async () => {
      const s = await call(`/v1/setup-sessions/${summary.sessionId}`);
      return JSON.stringify(shown(s.body)) === JSON.stringify([['vm-db', true, 1], ['vm-web', true, 1]]) || undefined;
    });

    await stopChild(first.instance);
    writeFileSync(clockFile, String(901_000));
    const missing = await waitFor('central_missing', async () => {
      const s = await call(`/v1/setup-sessions/${summary.sessionId}`);
      return s.body.deployment.status === 'central_missing' && s.body.deployment.recovery?.email ? s.body : undefined;
    });
    writeFileSync(clockFile, '0');
    assert.equal(missing.deployment.recovery.action.kind, 'reveal_recovery_token');
    await waitFor('the recovery e-mail', () => smtp.messages.length === 1);
    assert.deepEqual(smtp.messages[0]!.to, ['alice@example.test']);
    assert.match(smtp.messages[0]!.raw, new RegExp(deploymentId));
    const revealed = await call(`/v1/deployments/${deploymentId}/recovery-token/reveal`, 'POST');
    const recoveryToken: string = revealed.body.recovery_token;
    assert.match(recoveryToken, /^lrc_/);

    const keyBefore = readFileSync(file('vm-central', 'etc/vigil/secrets/deployment-identity.key'), 'utf8');
    const second = await installAndServe(['install', '--recovery', '--token-file', '-', '--inventory', inventory([{ id: 'vm-new', os: 'linux' }]), ...common], `${recoveryToken}\n`, keyBefore);
    assert.equal(await second.installer.exited, 0, second.installer.output());
    const recovered = JSON.parse(second.installer.output().trim().split('\n').at(-1)!);
    assert.equal(recovered.deploymentId, deploymentId, 'the deployment id is kept');
    assert.equal(recovered.enrollmentEpoch, 2);
    assert.notEqual(recovered.consoleCredentialId, summary.consoleCredentialId, 'the console credential is rotated');
    assert.ok(!existsSync(join(vms, 'vm-new')), 'a reinstall cannot widen the scope');
    assert.deepEqual(recovered.notInstalled.filter((e: { vm: string }) => e.vm !== 'vm-aaa'), [{ vm: 'vm-new', os: 'linux', reason: 'outside the approved scope: left untouched' }], 'no collector description for a VM outside the scope');
    const recoveryPlan = second.started.output();
    assert.match(recoveryPlan, /^Recovery: the scope approved at the first install applies/m);
    assert.ok(!/Scope to claim/.test(recoveryPlan), 'a recovery claims no scope of its own');
    const after = await call(`/v1/setup-sessions/${summary.sessionId}`);
    assert.ok(after.body.deployment.status_history.some((h: { status: string }) => h.status === 'recovered'));
    assert.equal(after.body.deployment.status, 'reporting');
    assert.deepEqual(shown(after.body), [['vm-db', false, 2], ['vm-web', false, 2]], 'no collector has replaced its enrollment yet');
    assert.deepEqual(after.body.deployment.collectors_waiting, ['vm-db', 'vm-web']);
    // Spec 3.2: every remote collector must replace its enrollment against the reinstalled central VM.
    assert.equal(await enrollAtInstance(port, 'vm-db'), 201);
    assert.equal(await enrollAtInstance(port, 'vm-web'), 201);
    const reenrolled = await waitFor('every collector re-enrolled in epoch 2 on the dashboard', async () => {
      const s = await call(`/v1/setup-sessions/${summary.sessionId}`);
      return s.body.deployment.collectors_waiting.length === 0 ? s.body : undefined;
    });
    assert.deepEqual(shown(reenrolled), [['vm-db', true, 2], ['vm-web', true, 2]]);
    for (const c of reenrolled.deployment.collectors) assert.ok(c.enrolled_at > missing.deployment.last_heartbeat_at, `${c.vm_id} enrolled after the old central went missing`);
    const pageRes = await fetch(`${url}/setup-sessions/${summary.sessionId}/live`, { headers: { cookie: call.cookie } });
    assert.match(await pageRes.text(), /Every collector in scope \(2\) enrolled again in epoch 2\./);

    const newKey = createPrivateKey(readFileSync(file('vm-central', 'etc/vigil/secrets/deployment-identity.key'), 'utf8'));
    assert.equal((await redeem(oldKey, 'vm-web', oldWeb, collectorKey)).status, 401, 'the old identity key is retired');
    assert.equal((await redeem(newKey, 'vm-web', oldWeb, collectorKey)).status, 401, 'the old enrollment is refused');
    assert.equal((await redeem(newKey, 'vm-db', oldDb, collectorKey)).status, 401, 'an unused old-epoch token is refused');
    const newWeb = readFileSync(file('vm-web', 'etc/vigil/collector/secrets/enrollment-token'), 'utf8').trim();
    assert.equal((await redeem(newKey, 'vm-web', newWeb, collectorKey)).status, 201, 'the re-enrollment of the new epoch is accepted');

    await stopChild(second.instance);
    await stopChild(authority);
    await smtp.close();
    const store = openLmdbStore(join(dir.path, 'authority-store'));
    const log = openLmdbLog(store);
    const types = [...log.read(1)].map((r) => r.type);
    await log.close();
    await store.close();
    assert.equal(types.filter((t) => t === 'RecoveryTokenIssued').length, 1);
    assert.equal(types.filter((t) => t === 'RecoveryClaimed').length, 1);
    for (const f of readdirSync(join(dir.path, 'authority-store'))) {
      assert.ok(!readFileSync(join(dir.path, 'authority-store', f)).includes(Buffer.from(recoveryToken)), `${f} holds the recovery token in clear`);
    }
  });
});
