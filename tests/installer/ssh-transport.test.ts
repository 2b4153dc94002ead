import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { InventoryVm } from '../../src/clients/installer/inventory.js';
import { isOrchestrationHost, shellQuote, sshFingerprint, sshTransport } from '../../src/clients/installer/ssh-transport.js';
import { ScopeViolationError, type VmTransport } from '../../src/clients/installer/transport.js';
import { tempDir } from '../helpers/temp.js';
import { freePort } from '../setup/processes.js';
import { startSshd, type TestSshd } from './sshd.js';

const dir = tempDir('vigil-ssh-');
const root = (vm: string) => join(dir.path, 'vms', vm);
const OTHER_KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHc7k4lJzHcQ5n0cVb3hF3m8kqgC2u8o1x3oVw6rM6mF';

describe('SSH transport against a real sshd', () => {
  let sshd: TestSshd;
  let t: VmTransport;
  const reports: Array<Record<string, unknown>> = [];
  const sshLog = join(dir.path, 'ssh-invocations.log');

  before(async () => {
    sshd = await startSshd(join(dir.path, 'sshd'), await freePort());
    // A wrapper that records every ssh invocation, so the test can tell which VMs were ever contacted.
    const wrapper = join(dir.path, 'ssh-wrapper');
    writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >> ${shellQuote(sshLog)}\nexec ssh "$@"\n`);
    chmodSync(wrapper, 0o755);
    const at = { address: '127.0.0.1', sshPort: sshd.port, sshUser: sshd.user };
    const inventory: InventoryVm[] = [
      { id: 'vm-a', os: 'linux', tags: [], install: true, ...at, sshHostKey: sshd.hostKey, prefix: root('vm-a') },
      { id: 'vm-b', os: 'linux', tags: [], install: true, ...at, sshHostKey: sshd.hostKey, prefix: root('vm-b') },
      { id: 'vm-wrong', os: 'linux', tags: [], install: true, ...at, sshHostKey: OTHER_KEY, prefix: root('vm-wrong') },
      { id: 'vm-unpinned', os: 'linux', tags: [], install: true, ...at, prefix: root('vm-unpinned') },
      { id: 'vm-noaddress', os: 'linux', tags: [], install: true },
    ];
    t = sshTransport({
      approved: ['vm-a', 'vm-wrong', 'vm-unpinned', 'vm-noaddress'], inventory, identityFile: sshd.userKeyFile,
      knownHostsFile: join(dir.path, 'work', 'known_hosts'), trustOnFirstUse: false, sshCommand: wrapper, report: (l) => reports.push(l),
    });
  });
  after(async () => { await sshd.stop(); dir.cleanup(); });

  const contacted = () => (existsSync(sshLog) ? readFileSync(sshLog, 'utf8') : '');

  it('writes a secret through stdin, 0600 in a 0700 folder, and reads the modes back', async () => {
    const secret = 'lce_THIS-IS-A-SECRET-value';
    await t.writeFile('vm-a', '/etc/vigil/collector/secrets/enrollment-token', `${secret}\n`, 0o600);
    const file = join(root('vm-a'), 'etc/vigil/collector/secrets/enrollment-token');
    assert.equal(readFileSync(file, 'utf8'), `${secret}\n`);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(join(root('vm-a'), 'etc/vigil/collector/secrets')).mode & 0o777, 0o700);
    assert.ok(!contacted().includes(secret), 'the secret never appears in the ssh command line');
    const modes = await t.modes('vm-a', ['/etc/vigil/collector/secrets/enrollment-token', '/etc/vigil/collector/secrets', '/etc/missing']);
    assert.deepEqual([...modes], [['/etc/vigil/collector/secrets/enrollment-token', 0o600], ['/etc/vigil/collector/secrets', 0o700]]);
  });

  it('runs argv, not a shell string: every word arrives as it was', async () => {
    assert.equal(await t.run('vm-a', ['printf', '%s|', "a b'c", '$HOME', '`id`', ';true']), "a b'c|$HOME|`id`|;true|");
    await assert.rejects(t.run('vm-a', ['false']), /exit 1/);
  });

  it('never connects to a VM outside the approved list, even one in the inventory', async () => {
    const before = contacted();
    for (const target of ['vm-b', 'vm-missing', 'localhost', '127.0.0.1', hostname()]) {
      await assert.rejects(t.writeFile(target, '/etc/x', 'x', 0o600), ScopeViolationError);
      await assert.rejects(t.run(target, ['true']), ScopeViolationError);
    }
    assert.equal(contacted(), before, 'ssh was not even started');
    assert.ok(!existsSync(root('vm-b')));
  });

  it('refuses a host whose key differs from the pinned one', async () => {
    await assert.rejects(t.writeFile('vm-wrong', '/etc/x', 'x', 0o600), /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
    assert.ok(!existsSync(root('vm-wrong')));
  });

  it('refuses an unpinned host without trust-on-first-use, before connecting', async () => {
    const before = contacted();
    await assert.rejects(t.writeFile('vm-unpinned', '/etc/x', 'x', 0o600), /no pinned SSH host key.*--trust-on-first-use/);
    await assert.rejects(t.writeFile('vm-noaddress', '/etc/x', 'x', 0o600), /no address/);
    assert.equal(contacted(), before);
  });

  it('with trust-on-first-use records the key once, shows its fingerprint, then holds the host to it', async () => {
    const known = join(dir.path, 'tofu', 'known_hosts');
    const inventory: InventoryVm[] = [{ id: 'vm-t', os: 'linux', tags: [], install: true, address: '127.0.0.1', sshPort: sshd.port, sshUser: sshd.user, prefix: root('vm-t') }];
    const seen: Array<Record<string, unknown>> = [];
    const tofu = sshTransport({ approved: ['vm-t'], inventory, identityFile: sshd.userKeyFile, knownHostsFile: known, trustOnFirstUse: true, report: (l) => seen.push(l) });
    await tofu.writeFile('vm-t', '/etc/a', 'a', 0o644);
    await tofu.writeFile('vm-t', '/etc/b', 'b', 0o644);
    assert.deepEqual(seen.map((l) => [l.vm, l.fingerprint]), [['vm-t', sshd.hostKeyFingerprint]], 'shown once, with the fingerprint ssh-keygen prints');
    assert.equal(sshFingerprint(sshd.hostKey), sshd.hostKeyFingerprint);
    assert.equal(readFileSync(known, 'utf8').trim(), `vigil-vm-vm-t ${sshd.hostKey}`);
    assert.equal(statSync(known).mode & 0o777, 0o600);
    // A changed key is refused later, trust-on-first-use or not.
    writeFileSync(known, `vigil-vm-vm-t ${OTHER_KEY}\n`, { mode: 0o600 });
    await assert.rejects(tofu.writeFile('vm-t', '/etc/c', 'c', 0o644), /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED/);
    assert.ok(!existsSync(join(root('vm-t'), 'etc/c')));
  });
});

describe('SSH transport helpers', () => {
  it('quotes any word so the remote shell hands it over unchanged', () => {
    fc.assert(fc.property(fc.string({ maxLength: 40 }).filter((s) => !s.includes('\u0000')), (word) => {
      const r = spawnSync('/bin/sh', ['-c', `printf %s ${shellQuote(word)}`], { encoding: 'utf8' });
      assert.equal(r.stdout, word);
    }), { numRuns: 60 });
  });

  it('tags only an address of one of this machine\'s own non-loopback interfaces as the orchestration host', () => {
    for (const loopback of ['127.0.0.1', '127.0.0.2', '::1', 'localhost', hostname()])
      assert.ok(!isOrchestrationHost(loopback), `${loopback}: a namespace or a port forward may answer there`);
    assert.ok(!isOrchestrationHost('192.0.2.10'));
    assert.ok(!isOrchestrationHost('vm-web.example.internal'));
    const own = Object.values(networkInterfaces()).flatMap((l) => l ?? []).find((i) => !i.internal);
    if (own) assert.ok(isOrchestrationHost(own.address.toUpperCase()), own.address);
  });
});
