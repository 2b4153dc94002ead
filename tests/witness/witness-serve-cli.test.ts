import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { LOG_SIGNER } from '../helpers/witness.js';
import { verifierKeyString, verifierOf } from '../../src/log/signed-note.js';

describe('vigil log witness serve refuses to start on secrets others can reach', () => {
  it('refuses a witness key file others can read and a state folder others can enter, and names the fix', () => {
    const dir = tempDir();
    try {
      const keyFile = join(dir.path, 'witness.key');
      assert.equal(runCli(['log', 'witness-key', 'witness.test/cli', '--out', keyFile]).status, 0);
      const logKey = verifierKeyString(verifierOf(LOG_SIGNER));
      const state = join(dir.path, 'state');
      const serve = (extra: string[] = []) => runCli(['log', 'witness', 'serve', '--key', logKey, '--witness-key', keyFile, '--state', state, '--listen', '127.0.0.1:0', ...extra]);
      chmodSync(keyFile, 0o644);
      const open = serve();
      assert.equal(open.status, 1);
      assert.match(open.stderr, /readable by others \(mode 644\); run: chmod 600/);
      chmodSync(keyFile, 0o600);
      mkdirSync(state, { mode: 0o755 });
      chmodSync(state, 0o755);
      const shared = serve();
      assert.equal(shared.status, 1);
      assert.match(shared.stderr, /accessible to group or others \(mode 755\); run: chmod 700/);
      writeFileSync(join(dir.path, 'bad.key'), 'not a key\n');
      assert.equal(runCli(['log', 'witness', 'serve', '--key', join(dir.path, 'bad.key'), '--witness-key', keyFile, '--state', state]).status, 2);
      assert.equal(runCli(['log', 'witness', 'watch']).status, 2, 'serve is its one verb');
      assert.equal(serve(['--listen', 'nowhere']).status, 2);
    } finally {
      dir.cleanup();
    }
  });
});
