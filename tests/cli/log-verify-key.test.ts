import { it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { logVerify } from '../../src/cli/log-commands.js';
import { verifierKeyString } from '../../src/log/signed-note.js';
import { startTestInstance } from '../helpers/instance.js';
import { runCli, writeTestConfig } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { day, ingest, sshFailure } from '../retention/helpers.js';

it('vigil log verify fails, rather than counting unverified checkpoints, when the signing key is gone', async () => {
  const t = await startTestInstance();
  try {
    await ingest(t.inst, [sshFailure(1, day(0))], day(0));
    await t.restart(async (path) => {
      assert.equal((await logVerify(path, t.transparency.verifier)).ok, true);
      const v = await logVerify(path, undefined);
      assert.equal(v.ok, false);
      assert.match((v as { reason: string }).reason, /signing key is not available here/);
    });
  } finally {
    await t.close();
  }
});

it('vigil log public-key prints the key that signs, and makes none where there is none', async () => {
  const dir = tempDir();
  try {
    const config = writeTestConfig(dir.path);
    const none = runCli(['log', 'public-key', '--config', config]);
    assert.equal(none.status, 1);
    assert.equal(none.stdout, '');
    assert.match(none.stderr, /no readable log signing key at .*keys\/log-signing\.key: `vigil serve` makes it/);
    assert.equal(existsSync(join(dir.path, 'keys', 'log-signing.key')), false, 'no key was made');
  } finally {
    dir.cleanup();
  }
  const t = await startTestInstance();
  try {
    const config = writeTestConfig(t.dir, { storage: { path: t.config.storage.path } });
    const key = runCli(['log', 'public-key', '--config', config]);
    assert.equal(key.status, 0, key.stderr);
    assert.equal(key.stdout.trim(), verifierKeyString(t.transparency.verifier), 'the key the running instance signs with');
  } finally {
    await t.close();
  }
});
