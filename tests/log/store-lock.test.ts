import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { acquirePidFileLock } from '../../src/log/store-lock.js';
import { tempDir } from '../helpers/temp.js';

class InUse extends Error {
  constructor(readonly owner: number | undefined) {
    super(`in use by ${owner}`);
  }
}
const take = (path: string) => acquirePidFileLock(path, (owner) => new InUse(owner));

/** A live process other than this one, whose pid a stale lock file can name. */
async function withOtherProcess(fn: (pid: number) => void): Promise<void> {
  const other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await once(other, 'spawn');
  try {
    fn(other.pid!);
  } finally {
    other.kill('SIGKILL');
    await once(other, 'exit');
  }
}

describe('the pid lock file', () => {
  it('records who holds it (pid, boot id, start time), owner-only, and leaves nothing else behind', () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'x.lock');
      const release = take(path);
      const [pid, who] = readFileSync(path, 'utf8').split(' ');
      assert.equal(pid, String(process.pid));
      assert.match(who ?? '', /^[0-9a-f-]{36}:\d+$/);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.deepEqual(readdirSync(dir.path), ['x.lock']);
      release();
      assert.equal(existsSync(path), false);
    } finally {
      dir.cleanup();
    }
  });

  it('is held by a live process it names, and taken over when that pid now belongs to another process', async () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'x.lock');
      await withOtherProcess((pid) => {
        const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
        // The holder this pid had before a reboot, or before the kernel gave the pid out again.
        // And this process's own pid held by an earlier process (a container's pid 1, started again).
        for (const gone of [`${pid} 00000000-0000-0000-0000-000000000000:1`, `${pid} ${boot}:1`, `${process.pid} ${boot}:1`, String(process.pid)]) {
          writeFileSync(path, gone);
          const release = take(path);
          assert.match(readFileSync(path, 'utf8'), new RegExp(`^${process.pid} `));
          release();
        }
        // The process itself (its real start time), and a lock written before locks said who: held.
        const started = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[19];
        for (const live of [`${pid} ${boot}:${started}`, String(pid)]) {
          writeFileSync(path, live);
          assert.throws(() => take(path), (err: InUse) => err instanceof InUse && err.owner === pid);
          assert.equal(readFileSync(path, 'utf8'), live, 'a held lock is left as it is');
        }
      });
      // Its holder gone (kill -9): taken over.
      const release = take(path);
      release();
    } finally {
      dir.cleanup();
    }
  });

  it('leaves a rival\'s fresh lock in place when the rival took the stale one over first, and takes it when it is gone', async () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'x.lock');
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      await withOtherProcess((rival) => {
        const started = readFileSync(`/proc/${rival}/stat`, 'utf8').split(') ')[1]!.split(' ')[19];
        const fresh = `${rival} ${boot}:${started}`;
        // A lock left by a process that is gone; between this process judging it stale and taking it
        // over, the rival (a second start after the crash) takes it over itself.
        writeFileSync(path, `${process.pid + 1_000_000} ${boot}:1`);
        assert.throws(() => acquirePidFileLock(path, (owner) => new InUse(owner), { beforeTakeover: () => writeFileSync(path, fresh) }),
          (err: InUse) => err instanceof InUse && err.owner === rival);
        assert.equal(readFileSync(path, 'utf8'), fresh, 'the rival still holds its lock');
        assert.deepEqual(readdirSync(dir.path), ['x.lock'], 'nothing moved aside is left behind');
      });
      // The stale lock gone by the time of the takeover (its rival released it): taken.
      writeFileSync(path, `${process.pid + 1_000_000} ${boot}:1`);
      const release = acquirePidFileLock(path, (owner) => new InUse(owner), { beforeTakeover: () => rmSync(path) });
      assert.match(readFileSync(path, 'utf8'), new RegExp(`^${process.pid} `));
      release();
    } finally {
      dir.cleanup();
    }
  });
});
