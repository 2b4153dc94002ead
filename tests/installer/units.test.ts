import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { execStart, privateTmpWarnings, renderUnit, UNIT_NAMES, UNIT_USERS, type UnitKind } from '../../src/clients/installer/units.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const dir = tempDir('vigil-units-');

/** `systemd-analyze verify` works without a running systemd: it loads the unit and checks its keys and executables. */
function verify(name: string, text: string): { status: number | null; stderr: string } {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  const r = spawnSync('systemd-analyze', ['verify', path], { encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr.trim() };
}

/** `systemd-analyze security --offline=true` on a unit file: its overall exposure level (0 best, 10 worst) and its report. */
function exposure(name: string, text: string): { level: number; report: string; status: number | null } {
  const path = join(dir.path, name);
  writeFileSync(path, text);
  const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--threshold=20', path], { encoding: 'utf8' });
  const m = /Overall exposure level for \S+: (\d+\.\d+)/.exec(r.stdout);
  assert.ok(m, `no exposure level in: ${r.stdout}${r.stderr}`);
  return { level: Number(m[1]), report: r.stdout, status: r.status };
}

const noAnalyze = existsSync('/usr/bin/systemd-analyze') ? false : 'systemd-analyze is not installed (Debian package systemd; tests/system-packages.mjs installs it)';

describe('systemd units', () => {
  after(() => dir.cleanup());

  for (const kind of ['instance', 'setup-authority', 'collector'] as UnitKind[]) {
    it(`ships a sandboxed ${kind} unit that systemd-analyze verify accepts`, () => {
      const unit = renderUnit(kind, { vigilExec: process.execPath, configFile: '/etc/vigil/x.json', writable: ['/var/lib/vigil-x'], user: UNIT_USERS[kind] });
      const r = verify(UNIT_NAMES[kind], unit);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stderr, '', 'no warnings either');
      for (const line of ['ProtectSystem=strict', 'NoNewPrivileges=yes', 'ReadWritePaths=/var/lib/vigil-x', `User=${UNIT_USERS[kind]}`, 'PrivateTmp=yes', 'CapabilityBoundingSet=']) {
        assert.ok(unit.split('\n').includes(line), `${kind} has ${line}`);
      }
      assert.notEqual(UNIT_USERS[kind], 'root');
      assert.ok(unit.includes(`ExecStart=${execStart(kind, { vigilExec: process.execPath, configFile: '/etc/vigil/x.json' }).join(' ')}`));
    });
  }

  for (const kind of ['instance', 'setup-authority', 'collector'] as UnitKind[]) {
    it(`rates the ${kind} unit at an exposure level of 2.0 or better in systemd-analyze security`, { skip: noAnalyze }, () => {
      const unit = renderUnit(kind, { vigilExec: process.execPath, configFile: '/etc/vigil/x.json', writable: ['/var/lib/vigil-x'], user: UNIT_USERS[kind] });
      const r = exposure(UNIT_NAMES[kind], unit);
      assert.ok(r.level <= 2.0, `${kind}: exposure ${r.level}\n${r.report.split('\n').filter((l) => l.startsWith('✗')).join('\n')}`);
      assert.equal(r.status, 0, 'under the threshold given');
      // What keeps Node.js running: its JIT needs writable executable memory, its services the network.
      assert.ok(!unit.includes('MemoryDenyWriteExecute'), 'the JIT must be able to map executable memory');
      assert.match(unit, /^RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK$/m);
      for (const line of ['SystemCallFilter=@system-service', 'SystemCallErrorNumber=EPERM', 'ProtectProc=invisible', 'RemoveIPC=yes'])
        assert.ok(unit.split('\n').includes(line), `${kind} has ${line}`);
    });
  }

  it('rates the printed setup authority unit at 2.0 or better, and the unhardened one of before worse (the check can fail)', { skip: noAnalyze }, () => {
    const cfg = join(dir.path, 'authority-rated.json');
    writeFileSync(cfg, JSON.stringify({ storage: { path: '/var/lib/vigil-authority/store' }, accounts: { file: '/etc/vigil-authority/accounts.json' }, recovery: { keyFile: '/var/lib/vigil-authority-secrets/recovery.key' } }));
    const printed = runCli(['setup-authority', 'unit', '--config', cfg, '--vigil-exec', process.execPath]);
    assert.equal(printed.status, 0, printed.stderr);
    assert.ok(exposure('printed-authority.service', printed.stdout).level <= 2.0);
    const unfiltered = printed.stdout.split('\n').filter((l) => !/^(SystemCallFilter|SystemCallErrorNumber|ProtectProc|RemoveIPC|PrivateMounts)=/.test(l)).join('\n');
    assert.ok(exposure('unfiltered-authority.service', unfiltered).level > 2.0);
  });

  it('warns about configured paths under /tmp or /var/tmp, which PrivateTmp hides, naming each key', () => {
    const cfg = join(dir.path, 'authority-tmp.json');
    writeFileSync(cfg, JSON.stringify({ storage: { path: '/var/tmp/authority/store' }, accounts: { file: '/tmp/secrets/accounts.json' }, recovery: { keyFile: '/var/lib/vigil-authority-secrets/recovery.key' } }));
    const r = runCli(['setup-authority', 'unit', '--config', cfg, '--vigil-exec', '/usr/local/bin/vigil']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /warning: storage\.path is \/var\/tmp\/authority\/store, under \/var\/tmp, which the unit's PrivateTmp=yes hides/);
    assert.match(r.stderr, /warning: accounts\.file is \/tmp\/secrets\/accounts\.json, under \/tmp,/);
    assert.doesNotMatch(r.stderr, /recovery\.keyFile/);
    assert.ok(!r.stdout.includes('warning'), 'the unit on stdout stays clean');
    // The config itself sits in the test's temp folder: under /tmp too, when that is where temp folders are.
    assert.equal(r.stderr.includes(`--config is ${cfg}`), /^\/(var\/)?tmp\//.test(cfg));
    assert.deepEqual(privateTmpWarnings({ a: '/tmpfoo/x', b: '/var/lib/tmp/x', c: '/tmp', d: undefined }).length, 1);
  });

  it('is checked for real: verify refuses a unit whose executable does not exist', () => {
    const r = verify('broken.service', renderUnit('instance', { vigilExec: '/nonexistent/vigil', configFile: '/etc/vigil/x.json', writable: ['/var/lib/vigil'], user: 'vigil' }));
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /nonexistent/);
  });

  it('refuses paths systemd would split or expand', () => {
    assert.throws(() => renderUnit('collector', { vigilExec: '/usr/bin/vigil', configFile: '/etc/my vigil.json', writable: ['/var/lib/x'], user: 'x' }), /refusing path/);
    assert.throws(() => renderUnit('collector', { vigilExec: '/usr/bin/vigil', configFile: '/etc/vigil.json', writable: ['/var/lib/$HOME'], user: 'x' }), /refusing path/);
  });

  it('prints the setup authority unit for its config, with its store and key folders writable', () => {
    const cfg = join(dir.path, 'authority.json');
    writeFileSync(cfg, JSON.stringify({ storage: { path: '/var/lib/vigil-authority/store' }, accounts: { file: '/etc/vigil-authority/accounts.json' }, recovery: { keyFile: '/var/lib/vigil-authority-secrets/recovery.key' } }));
    const r = runCli(['setup-authority', 'unit', '--config', cfg, '--vigil-exec', process.execPath]);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^ExecStart=${process.execPath} setup-authority serve --config ${cfg}$`, 'm'));
    assert.match(r.stdout, /^ReadWritePaths=\/var\/lib\/vigil-authority \/var\/lib\/vigil-authority-secrets$/m);
    const verified = verify('vigil-setup-authority.service', r.stdout);
    assert.equal(verified.status, 0, verified.stderr);
    assert.equal(verified.stderr, '');
  });
});
