import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { AuthorityError, type AuthorityClient } from '../../src/clients/installer/authority-client.js';
import type { InstallState, StateStore } from '../../src/clients/installer/install-state.js';
import { staticInventoryProvider, type InventoryVm } from '../../src/clients/installer/inventory.js';
import { ChecksFailedError, NODE_ENGINES, readProbe, satisfiesEngines, vmChecks, type CheckResult } from '../../src/clients/installer/preflight.js';
import { runInstall } from '../../src/clients/installer/run-install.js';
import { directoryTransport } from '../../src/clients/installer/transport.js';
import { repoPath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { startTestAuthority, type TestAuthority } from '../setup/harness.js';

const vm = (id: string, over: Partial<InventoryVm> = {}): InventoryVm => ({ id, os: 'linux', tags: [], install: true, ...over });
const facts = (over: Partial<ReturnType<typeof readProbe>> = {}) => ({ ...readProbe('uid=0\nsudo=no\nsystemd=yes\nnode=v22.12.0\ndisk_kb=9999999\n'), ...over });
const options = { serviceManager: 'systemd' as const, centralPort: 4173, portMayBeOurs: false };
const failed = (results: readonly CheckResult[]) => results.filter((r) => r.status === 'fail').map((r) => r.check);

describe('installer checks', () => {
  it('accept exactly the Node.js versions of package.json engines', () => {
    const engines = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')).engines.node;
    assert.equal(NODE_ENGINES, engines);
    for (const ok of ['v20.19.0', 'v20.20.2', 'v22.12.0', 'v22.99.1', 'v24.0.0', 'v25.1.0']) assert.ok(satisfiesEngines(ok), ok);
    for (const no of ['v18.20.0', 'v20.18.9', 'v21.7.0', 'v22.11.0', 'v23.9.0', '', 'node: not found']) assert.ok(!satisfiesEngines(no), no);
  });

  it('read what the probe printed: uid, sudo, systemd, node, free disk, listening ports from /proc/net/tcp', () => {
    const f = readProbe('noise\nuid=1000\nsudo=no\nsystemd=no\nnode=v20.19.0\ndisk_kb=2048\nlisten=0100007F:1F90\nlisten=00000000000000000000000000000000:0016\n');
    assert.deepEqual({ ...f, listeningPorts: [...f.listeningPorts].sort((a, b) => a - b) }, { uid: 1000, sudo: false, systemd: false, node: 'v20.19.0', freeBytes: 2048 * 1024, listeningPorts: [22, 8080] });
    fc.assert(fc.property(fc.string(), (s) => { readProbe(s); }));
  });

  it('fail a VM without root or sudo, without systemd under systemd, with an old Node.js, little disk or a busy port', () => {
    const central = (f: ReturnType<typeof facts>, o = options) => vmChecks(vm('c', { sshUser: 'admin' }), 'central', f, { ...o } as never);
    assert.deepEqual(failed(central(facts())), []);
    assert.deepEqual(failed(central(facts({ uid: 1000, sudo: true }))), [], 'sudo is enough');
    const noSudo = central(facts({ uid: 1000, sudo: false }));
    assert.deepEqual(failed(noSudo), ['privileges']);
    assert.match(noSudo.find((r) => r.check === 'privileges')!.detail, /admin is not root and sudo -n true fails/);
    assert.deepEqual(failed(central(facts({ systemd: false }))), ['service_manager']);
    assert.deepEqual(failed(central(facts({ systemd: false }), { ...options, serviceManager: 'none' as never })), [], 'none needs no systemd');
    assert.deepEqual(failed(central(facts({ node: 'v18.19.0' }))), ['node']);
    assert.deepEqual(failed(central(facts({ freeBytes: 100 * 1024 ** 2 }))), ['disk']);
    assert.deepEqual(failed(vmChecks(vm('w'), 'collector', facts({ freeBytes: 300 * 1024 ** 2 }), options as never)), [], 'a collector needs less');
    assert.deepEqual(failed(central(facts({ listeningPorts: new Set([4173]) }))), ['ports']);
    assert.deepEqual(failed(central(facts({ listeningPorts: new Set([4173]) }), { ...options, portMayBeOurs: true })), [], 'recovery: our own instance');
  });
});

describe('an install whose checks fail', () => {
  let t: TestAuthority;
  before(async () => { t = await startTestAuthority(); });
  after(async () => { await t.close(); });

  it('stops before the claim (a VM without sudo), changes nothing, and leaves the token claimable', async () => {
    const d = tempDir();
    const inv = join(d.path, 'inventory.json');
    writeFileSync(inv, JSON.stringify({ vms: [{ id: 'vm-1', os: 'linux', sshUser: 'admin' }, { id: 'vm-2', os: 'linux' }] }));
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: await t.signIn('alice') });
    const calls: string[] = [];
    const client: AuthorityClient = {
      post: async (p, b, bearer) => { calls.push(`POST ${p}`); const r = await t.json(p, { body: b, ...(bearer ? { bearer } : {}) }); if (r.status >= 400) throw new AuthorityError(r.status, r.body.error); return r.body; },
      get: async (p) => { calls.push(`GET ${p}`); return (await t.json(p)).body; },
    };
    let saved: InstallState | undefined;
    const state: StateStore = { path: 'memory', load: () => saved, save: (s) => { saved = s; } };
    const reported: CheckResult[][] = [];
    const probe = async (vmId: string) => (vmId === 'vm-1' ? 'uid=1000\nsudo=no\nsystemd=yes\nnode=v22.12.0\ndisk_kb=99999999\n' : 'uid=0\nsystemd=yes\nnode=v22.12.0\ndisk_kb=99999999\n');
    const error = await runInstall({
      client, setupUrl: 'http://authority.test', token: created.body.setup_token, recovery: false, resume: false, state,
      inventory: staticInventoryProvider(inv), transport: () => ({ ...directoryTransport(join(d.path, 'vms')), probe }),
      confirm: async () => true, reportChecks: (r) => reported.push([...r]), isOrchestrationHost: () => false, vigilExec: '/usr/local/bin/vigil',
      serviceManager: 'systemd', collectorFiles: [], centralListen: { host: '0.0.0.0', port: 4173 }, snapshotIntervalSeconds: 5,
      waitMs: 1000, pollMs: 10, progress: () => {}, onConsoleCredential: () => assert.fail('nothing is provisioned'),
    }).catch((e: unknown) => e);
    assert.ok(error instanceof ChecksFailedError, String(error));
    assert.deepEqual(failed(reported[0]!), ['privileges']);
    assert.deepEqual(calls, ['GET /health'], 'only the read-only health check reached the authority');
    assert.equal(saved, undefined, 'no state: nothing was claimed');
    assert.equal((await t.json('/v1/setup-sessions/connect', { body: { setup_token: created.body.setup_token } })).status, 200, 'the token still claims');
    d.cleanup();
  });
});
