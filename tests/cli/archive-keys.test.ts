import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readVerifierKeys } from '../../src/cli/log-commands.js';
import { verifierKeyString, verifierOf } from '../../src/log/signed-note.js';

const key = (n: number) => verifierKeyString(verifierOf({ name: `vigil.log/node${n}`, seed: new Uint8Array(32).fill(n) }));

describe('vigil log verify --archive-keys FILE', () => {
  it('reads one verifier key a line, skipping blank and # lines, and names the file line of one that is not a key', () => {
    assert.deepEqual(readVerifierKeys(`# the cluster's nodes\n${key(1)}\n\n  ${key(2)}  \n`).map((k) => k.name), ['vigil.log/node1', 'vigil.log/node2']);
    assert.throws(() => readVerifierKeys(`# keys\n\n${key(1)}\nnot-a-key\n`), /line 4 of the archive keys/);
  });
});
