import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { execStart, renderUnit, UNIT_NAMES, UNIT_USERS, type UnitKind } from '../../src/clients/installer/units.js';
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
