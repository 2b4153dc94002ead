import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { installerCommand } from '../../src/setup/pages/installer-command.js';
import type { DeploymentView } from '../../src/setup/projections/deployments.js';
import { consoleUrl } from '../../src/setup/status-view.js';

const reporting = (instanceUrl: unknown) => ({ snapshot: { instance_url: instanceUrl } }) as unknown as DeploymentView;

/** The words a POSIX shell makes of a pasted command line. */
function shellWords(line: string): string[] {
  const r = spawnSync('/bin/sh', ['-c', 'eval "set -- $1"; printf "%s\\0" "$@"', 'sh', line], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\0').slice(0, -1);
}

describe('setup page helpers', () => {
  it('points the console link at / of the reported instance URL', () => {
    assert.equal(consoleUrl(reporting('http://10.0.0.5:4173')), 'http://10.0.0.5:4173/');
    assert.equal(consoleUrl(reporting('https://vigil.internal/base?x=1#y')), 'https://vigil.internal/base/');
    assert.equal(consoleUrl(reporting('https://user:secret@vigil.internal/')), 'https://vigil.internal/');
    assert.equal(consoleUrl(reporting('javascript:alert(1)')), undefined);
    assert.equal(consoleUrl(reporting(42)), undefined);
    assert.equal(consoleUrl(undefined), undefined);
  });

  it('never yields anything but an http(s) URL ending in a slash, whatever the snapshot held', () => {
    fc.assert(fc.property(fc.oneof(fc.string(), fc.webUrl({ withQueryParameters: true, withFragments: true }), fc.anything()), (input) => {
      const url = consoleUrl(reporting(input));
      if (url === undefined) return;
      const parsed = new URL(url);
      assert.ok(parsed.protocol === 'http:' || parsed.protocol === 'https:');
      assert.ok(parsed.pathname.endsWith('/'));
      assert.equal(parsed.search + parsed.hash + parsed.username + parsed.password, '');
    }));
  });

  it('quotes the authority URL so that the shell passes it to the installer unchanged', () => {
    fc.assert(fc.property(fc.oneof(fc.webUrl(), fc.string({ minLength: 1 }).filter((s) => !s.includes('\0'))), (url) => {
      const words = shellWords(installerCommand(url, 'setup').install);
      assert.deepEqual(words.slice(0, 6), ['vigil', 'install', '--setup-url', url, '--token-file', 'setup-token']);
    }), { numRuns: 60 });
    assert.deepEqual(shellWords(installerCommand('https://setup.example', 'recovery').install).slice(0, 7), ['vigil', 'install', '--recovery', '--setup-url', 'https://setup.example', '--token-file', 'recovery-token']);
  });

  it('suggests the SSH transport, with which a session can complete, and names the directory one only as staging', () => {
    for (const kind of ['setup', 'recovery'] as const) {
      const c = installerCommand('https://setup.example', kind);
      const words = shellWords(c.install);
      assert.equal(words[words.indexOf('--transport') + 1], 'ssh');
      assert.ok(words.includes('--ssh-key'));
      assert.ok(!c.install.includes('directory:'), c.install);
      assert.match(c.stagingNote, /directory:DIR only stages .* the session cannot complete/);
    }
  });
});
