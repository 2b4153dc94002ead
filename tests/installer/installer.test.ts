import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readRegistry } from '../../src/auth/registry.js';
import { hashToken } from '../../src/auth/tokens.js';
import { loadAgentConfig } from '../../src/cli/collector-commands.js';
import { loadConfig } from '../../src/cli/config-file.js';
import { AuthorityError, type AuthorityClient } from '../../src/clients/installer/authority-client.js';
import { selectCentral, staticInventoryProvider, type InventoryVm } from '../../src/clients/installer/inventory.js';
import type { InstallState, StateStore } from '../../src/clients/installer/install-state.js';
import { InstallDeclinedError, runInstall } from '../../src/clients/installer/run-install.js';
import { ScopeViolationError, directoryTransport, guardedTransport, type VmTransport } from '../../src/clients/installer/transport.js';
import { sendSnapshot, startTestAuthority, type TestAuthority } from '../setup/harness.js';
import { tempDir } from '../helpers/temp.js';

const vm = (id: string, over: Partial<InventoryVm> = {}): InventoryVm => ({ id, os: 'linux', tags: [], install: true, ...over });

/** The installer state kept in memory (the CLI keeps it in `<work-dir>/install-state.json`). */
function memoryState(): StateStore & { current?: InstallState } {
  const store: StateStore & { current?: InstallState } = {
    path: 'memory',
    load: () => (store.current ? structuredClone(store.current) : undefined),
    save: (s) => { store.current = structuredClone(s); },
  };
  return store;
}

/** The options every run here shares besides its client, token, inventory and transport. */
const runOptions = { setupUrl: 'http://authority.test', resume: false, reportChecks: () => {}, onConsoleCredential: () => {} };

describe('installer central selection', () => {
  it('picks the first Linux VM by id, preferring vigil:central tags, never a VM excluded from install', () => {
    assert.equal(selectCentral([vm('b'), vm('a', { os: 'windows' }), vm('c')]).id, 'b');
    assert.equal(selectCentral([vm('b'), vm('z', { tags: ['vigil:central'] }), vm('y', { tags: ['vigil:central'] })]).id, 'y');
    assert.equal(selectCentral([vm('a', { install: false }), vm('b')]).id, 'b');
    assert.equal(selectCentral([vm('b'), vm('a')]).id, selectCentral([vm('a'), vm('b')]).id, 'order of discovery does not matter');
    assert.throws(() => selectCentral([vm('w', { os: 'windows' })]), /Linux/);
  });

  it('refuses an inventory with a duplicate or malformed VM', async () => {
    const d = tempDir();
    const path = join(d.path, 'inv.json');
    writeFileSync(path, JSON.stringify({ vms: [{ id: 'a', os: 'linux' }, { id: 'A', os: 'linux' }] }));
    await assert.rejects(staticInventoryProvider(path).list(), /listed twice/);
    writeFileSync(path, JSON.stringify({ vms: [{ id: 'a b', os: 'linux' }] }));
    await assert.rejects(staticInventoryProvider(path).list(), /vms\[0\]\.id/);
    d.cleanup();
  });
});

describe('installer transport guard', () => {
  it('refuses every target outside the approved vms list, the orchestration host included', async () => {
    const d = tempDir();
    const t = guardedTransport(directoryTransport(d.path), ['vm-1']);
    for (const target of ['vm-2', 'localhost', '127.0.0.1', hostname(), '']) {
      await assert.rejects(t.writeFile(target, '/etc/x', 'x', 0o600), ScopeViolationError);
      await assert.rejects(t.run(target, ['true']), ScopeViolationError);
      assert.ok(!existsSync(join(d.path, target || '_')), `${target} was touched`);
    }
    await assert.rejects(t.writeFile('vm-1', '/etc/../../escape', 'x', 0o600), /normalized absolute path/);
    await t.writeFile('vm-1', '/etc/vigil/secret', 's', 0o600);
    assert.equal(statSync(join(d.path, 'vm-1', 'etc/vigil/secret')).mode & 0o777, 0o600);
    assert.deepEqual([...t.touched], ['vm-1']);
    d.cleanup();
  });
});

describe('installer against an in-process authority', () => {
  let t: TestAuthority;
  before(async () => { t = await startTestAuthority(); });
  after(async () => { await t.close(); });

  function client(onProgress?: (path: string) => Promise<void>): AuthorityClient {
    const call = async <T>(path: string, body?: unknown, bearer?: string): Promise<T> => {
      await onProgress?.(path);
      const r = await t.json(path, { ...(body !== undefined ? { body } : {}), ...(bearer ? { bearer } : {}) });
      if (r.status >= 400) throw new AuthorityError(r.status, r.body.error);
      return r.body as T;
    };
    return { post: (p, b, bearer) => call(p, b, bearer), get: (p, bearer) => call(p, undefined, bearer) };
  }

  it('claims the proposed scope, never touches VMs left out of it, and completes after the first snapshot', async () => {
    const d = tempDir();
    const inv = join(d.path, 'inventory.json');
    writeFileSync(inv, JSON.stringify({ vms: [{ id: 'vm-1', os: 'linux' }, { id: 'vm-2', os: 'windows' }, { id: 'vm-3', os: 'linux' }, { id: 'vm-0', os: 'linux', install: false }] }));
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: await t.signIn('alice') });
    let snapshotSent = false;
    let planText = '';
    const state = memoryState();
    const options: Parameters<typeof runInstall>[0] = {
      client: client(async (path) => {
        if (!path.endsWith('/progress') || snapshotSent) return;
        const cfg = JSON.parse(readFileSync(join(d.path, 'vms', 'vm-1', 'etc/vigil/vigil.config.json'), 'utf8'));
        const pem = readFileSync(cfg.deployment.identityKeyFile, 'utf8');
        const { createPrivateKey, createPublicKey, sign } = await import('node:crypto');
        const key = createPrivateKey(pem);
        const signer = { pem: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(), privateKey: key, sign: (b: Uint8Array) => sign(null, b, key).toString('base64') };
        assert.equal((await sendSnapshot(t, cfg.deployment.deploymentId, signer)).status, 202);
        snapshotSent = true;
      }),
      ...runOptions, state, token: created.body.setup_token, recovery: false, inventory: staticInventoryProvider(inv), transport: () => directoryTransport(join(d.path, 'vms')),
      confirm: async (text: string) => { planText = text; return true; }, isOrchestrationHost: () => false, vigilExec: '/usr/local/bin/vigil', serviceManager: 'none', collectorFiles: [],
      centralListen: { host: '127.0.0.1', port: 4173 }, snapshotIntervalSeconds: 5, waitMs: 5000, pollMs: 10, progress: () => {},
    };
    const started = await runInstall(options);
    assert.equal(started.status, 'awaiting_services', 'without a service manager the run stops for the operator to start services');
    assert.deepEqual(started.toStart.map((s) => [s.vm, s.unit]), [['vm-1', 'vigil.service'], ['vm-3', 'vigil-collector.service']]);
    assert.equal(snapshotSent, false, 'it did not wait for a snapshot');
    assert.equal(state.current?.status, 'awaiting_services');
    const result = await runInstall({ ...options, resume: true, token: undefined });
    assert.equal(result.status, 'completed');
    assert.equal(result.sessionId, started.sessionId, 'the same session, no new token');
    assert.equal(result.centralVmId, 'vm-1');
    assert.deepEqual(result.scope.vms, ['vm-1', 'vm-3'], 'the Windows VM and the VM marked not to install stay out of the claimed scope');
    assert.deepEqual(result.touched, ['vm-1', 'vm-3']);
    assert.ok(!existsSync(join(d.path, 'vms', 'vm-0')));
    assert.ok(!existsSync(join(d.path, 'vms', 'vm-2')), 'a VM without a collector for its OS is left untouched');
    assert.deepEqual(result.notInstalled.map((e) => [e.vmId, e.role]), [['vm-0', 'excluded'], ['vm-2', 'unsupported_os']]);
    assert.match(planText, /vm-2 +windows .*no collector for this OS yet/);
    assert.match(readFileSync(join(d.path, 'vms', 'vm-3', 'etc/vigil/collector/secrets/enrollment-token'), 'utf8'), /^lce_/);
    const { config } = loadConfig(join(d.path, 'vms', 'vm-1', 'etc/vigil/vigil.config.json'), {}, '/');
    const credentials = readRegistry(config.auth.credentialsFile);
    const agent = loadAgentConfig(join(d.path, 'vms', 'vm-3', 'etc/vigil/collector/collector.json'));
    assert.equal(agent.server, 'http://vm-1:4173', 'the central URL (no address in this inventory: the VM id)');
    assert.equal(agent.stateDir, join(d.path, 'vms', 'vm-3', 'var/lib/vigil-collector'));
    const bound = credentials.find((c) => c.tokenHash === hashToken(readFileSync(agent.bearerTokenFile!, 'utf8').trim()));
    assert.deepEqual([bound?.roles, bound?.collectorId], [['collector'], 'vm-3'], 'the collector credential is bound to its collector id');
    assert.deepEqual(credentials.map((c) => c.roles[0]).sort(), ['collector', 'console']);
    const grants = readFileSync(join(d.path, 'vms', 'vm-1', 'etc/vigil/secrets/enrollment-grants.json'), 'utf8');
    assert.ok(!grants.includes('lce_'), 'the central VM gets only token hashes');
    const status = await t.json(`/v1/setup-sessions/${result.sessionId}`, { browser: await t.signIn('alice') });
    assert.equal(status.body.status, 'completed');
    d.cleanup();
  });

  it('under systemd creates the service user, hands it the config, restarts the unit and reads its state back', async () => {
    const d = tempDir();
    const inv = join(d.path, 'inventory.json');
    writeFileSync(inv, JSON.stringify({ vms: [{ id: 'vm-1', os: 'linux' }, { id: 'vm-2', os: 'linux' }] }));
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: await t.signIn('alice') });
    // An in-memory VM (root "/", parents made 0700) that records commands: `id -u` fails on vm-1 (no user yet) and succeeds on vm-2.
    const files = new Map<string, { content: string; mode: number }>();
    const runs: string[] = [];
    const memory: VmTransport = {
      root: () => '/',
      async writeFile(vm, path, content, mode) { files.set(`${vm}:${path}`, { content, mode }); },
      async makeDir(vm, path, mode) { files.set(`${vm}:${path}`, { content: '', mode }); },
      async run(vm, argv) {
        runs.push(`${vm}: ${argv.join(' ')}`);
        if (argv[0] === 'id' && vm === 'vm-1') throw new Error('id: no such user');
        return argv[1] === 'is-active' ? 'active\n' : '';
      },
      async modes(vm, paths) { return new Map(paths.map((p) => [p, files.get(`${vm}:${p}`)?.mode ?? 0o700])); },
      async rename(vm, moves) { for (const [from, to] of moves) { files.set(`${vm}:${to}`, files.get(`${vm}:${from}`)!); files.delete(`${vm}:${from}`); } },
    };
    const lines: Array<Record<string, unknown>> = [];
    let snapshotSent = false;
    await runInstall({
      client: client(async (path) => {
        if (!path.endsWith('/progress') || snapshotSent) return;
        const cfg = JSON.parse(files.get('vm-1:/etc/vigil/vigil.config.json')!.content);
        const { createPrivateKey, createPublicKey, sign } = await import('node:crypto');
        const key = createPrivateKey(files.get('vm-1:/etc/vigil/secrets/deployment-identity.key')!.content);
        const signer = { pem: createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString(), privateKey: key, sign: (b: Uint8Array) => sign(null, b, key).toString('base64') };
        assert.equal((await sendSnapshot(t, cfg.deployment.deploymentId, signer)).status, 202);
        snapshotSent = true;
      }),
      ...runOptions, state: memoryState(), token: created.body.setup_token, recovery: false, inventory: staticInventoryProvider(inv), transport: () => memory,
      confirm: async () => true, isOrchestrationHost: () => false, vigilExec: '/usr/local/bin/vigil', serviceManager: 'systemd', collectorFiles: [],
      centralListen: { host: '127.0.0.1', port: 4173 }, snapshotIntervalSeconds: 5, waitMs: 5000, pollMs: 10, progress: (l) => lines.push(l),
    });
    assert.deepEqual(runs, [
      'vm-1: id -u vigil',
      'vm-1: useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin vigil',
      'vm-1: chown -R vigil:vigil -- /etc/vigil /var/lib/vigil',
      'vm-1: systemctl daemon-reload', 'vm-1: systemctl enable vigil.service', 'vm-1: systemctl restart vigil.service', 'vm-1: systemctl is-active vigil.service',
      'vm-2: id -u vigil-collector',
      'vm-2: chown -R vigil-collector:vigil-collector -- /etc/vigil /var/lib/vigil-collector',
      'vm-2: systemctl daemon-reload', 'vm-2: systemctl enable vigil-collector.service', 'vm-2: systemctl restart vigil-collector.service', 'vm-2: systemctl is-active vigil-collector.service',
    ]);
    assert.deepEqual(lines.filter((l) => l.msg === 'service status').map((l) => [l.vm, l.unit, l.state]), [['vm-1', 'vigil.service', 'active'], ['vm-2', 'vigil-collector.service', 'active']]);
    assert.match(files.get('vm-1:/etc/systemd/system/vigil.service')!.content, /^ExecStart=\/usr\/local\/bin\/vigil serve --config \/etc\/vigil\/vigil.config.json$/m);
    d.cleanup();
  });

  it('stops when a secret reads back with other permissions than it was written with', async () => {
    const d = tempDir();
    const inv = join(d.path, 'inventory.json');
    writeFileSync(inv, JSON.stringify({ vms: [{ id: 'vm-1', os: 'linux' }] }));
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: await t.signIn('alice') });
    const inner = directoryTransport(join(d.path, 'vms'));
    // A VM whose umask or ACLs widen what was written: the read-back must catch it.
    const widening: VmTransport = { ...inner, async modes(vm, paths) { const m = new Map(await inner.modes(vm, paths)); m.set('/etc/vigil/secrets', 0o755); return m; } };
    await assert.rejects(runInstall({
      ...runOptions, state: memoryState(), client: client(), token: created.body.setup_token, recovery: false, inventory: staticInventoryProvider(inv), transport: () => widening,
      confirm: async () => true, isOrchestrationHost: () => false, vigilExec: '/usr/local/bin/vigil', serviceManager: 'none', collectorFiles: [],
      centralListen: { host: '127.0.0.1', port: 4173 }, snapshotIntervalSeconds: 5, waitMs: 5000, pollMs: 10, progress: () => {},
    }), /\/etc\/vigil\/secrets is 755, expected 700/);
    d.cleanup();
  });

  it('claims nothing when the plan is declined', async () => {
    const d = tempDir();
    const inv = join(d.path, 'inventory.json');
    writeFileSync(inv, JSON.stringify({ vms: [{ id: 'vm-1', os: 'linux' }] }));
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: await t.signIn('alice') });
    const calls: string[] = [];
    await assert.rejects(runInstall({
      ...runOptions, state: memoryState(), client: client(async (path) => { calls.push(path); }), token: created.body.setup_token, recovery: false, inventory: staticInventoryProvider(inv),
      transport: () => directoryTransport(join(d.path, 'vms')), confirm: async () => false, isOrchestrationHost: () => false, vigilExec: '/usr/local/bin/vigil', serviceManager: 'none', collectorFiles: [],
      centralListen: { host: '127.0.0.1', port: 4173 }, snapshotIntervalSeconds: 5, waitMs: 5000, pollMs: 10, progress: () => {},
    }), InstallDeclinedError);
    assert.deepEqual(calls, [], 'not even connect is called');
    assert.ok(!existsSync(join(d.path, 'vms')));
    const status = await t.json(`/v1/setup-sessions/${created.body.session_id}`, { browser: await t.signIn('alice') });
    assert.equal(status.body.status, 'created');
    d.cleanup();
  });
});
