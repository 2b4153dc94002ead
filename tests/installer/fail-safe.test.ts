import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tempDir } from '../helpers/temp.js';
import { freePort, stopChild, type Child } from '../setup/processes.js';
import { checksBeforeClaim, killedThenAbandoned, killedThenResumed, startFailSafe } from './fail-safe-cases.js';
import { startSshd, type TestSshd } from './sshd.js';

/*
 * The VMs are three prefixes behind one loopback sshd (as in deploy-over-ssh.test.ts): the same cases run with each
 * VM a network namespace with its own sshd and host key in fail-safe-netns.test.ts (when root), which also covers a
 * VM without sudo over a real sshd; preflight.test.ts covers it with a scripted probe.
 */

const dir = tempDir('vigil-fail-safe-');
const children: Child[] = [];
let sshd: TestSshd | undefined;

describe('an install that fails is caught before the claim, or resumed, or abandoned, with no live file changed', () => {
  after(async () => {
    for (const c of children) await stopChild(c);
    await sshd?.stop();
    dir.cleanup();
  });

  it('checks without spending the token, stages before switching, resumes the same session, abandons on record', { timeout: 600_000 }, async () => {
    sshd = await startSshd(join(dir.path, 'sshd'), await freePort());
    const vms = ['vm-central', 'vm-db', 'vm-web'].map((id) => ({ id, address: '127.0.0.1', sshPort: sshd!.port, sshUser: sshd!.user, hostKey: sshd!.hostKey }));
    const f = await startFailSafe({ dir: dir.path, vms, sshKey: sshd.userKeyFile, children });
    await checksBeforeClaim(f);
    await killedThenAbandoned(f);
    await killedThenResumed(f);
  });
});
