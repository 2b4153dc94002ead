import { it } from 'node:test';
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { logVerify } from '../../src/cli/log-commands.js';
import { startTestInstance } from '../helpers/instance.js';

it('vigil log verify fails, rather than counting unverified checkpoints, when the signing key is gone', async () => {
  const t = await startTestInstance();
  try {
    await t.restart(async (path) => {
      assert.equal((await logVerify(path)).ok, true);
      renameSync(join(path, 'log-signing.key'), join(path, '..', 'moved.key'));
      const v = await logVerify(path);
      assert.equal(v.ok, false);
      assert.match((v as { reason: string }).reason, /signing key .* is missing/);
      renameSync(join(path, '..', 'moved.key'), join(path, 'log-signing.key'));
    });
  } finally {
    await t.close();
  }
});
