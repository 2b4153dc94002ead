import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, parse } from 'node:path';
import { CLI } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { makeEvent } from '../helpers/instance.js';

/**
 * The documented layout of docs/log.md "Signed heads", with two users: the writer (`vigil serve`,
 * owning the store) and the signer (`vigil signer serve`, owning the key and its state), sharing only
 * the socket's group. Needs root to make the users, as CI and this machine have.
 */
const WRITER = 'vigil-t-writer';
const SIGNER = 'vigil-t-signer';
const GROUP = 'vigil-t-sign';

function sh(cmd: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function ensureUsers(): { writer: number; signer: number; group: number } {
  if (sh('getent', ['group', GROUP]).status !== 0) assert.equal(sh('groupadd', ['--system', GROUP]).status, 0);
  for (const user of [WRITER, SIGNER]) {
    if (sh('id', ['-u', user]).status !== 0)
      assert.equal(sh('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', '--groups', GROUP, user]).status, 0);
  }
  const id = (flag: string, name: string) => Number(sh('id', [flag, name]).stdout.trim());
  return { writer: id('-u', WRITER), signer: id('-u', SIGNER), group: Number(sh('getent', ['group', GROUP]).stdout.split(':')[2]) };
}

/** setpriv's arguments to run a command as `user` with primary group `group` (its other groups from /etc/group). */
function as(user: string, group = user): string[] {
  return [`--reuid=${user}`, `--regid=${group}`, '--init-groups', '--'];
}

/** The folders above the repository other users must pass through to run its CLI (a clone in a 0700 temp dir). */
function openPathToRepo(): () => void {
  const changed: Array<[string, number]> = [];
  for (let d = repoPath(); d !== parse(d).root; d = dirname(d)) {
    const mode = statSync(d).mode & 0o777;
    if ((mode & 0o001) === 0) {
      changed.push([d, mode]);
      chmodSync(d, mode | 0o001);
    }
  }
  return () => {
    for (const [d, mode] of changed) chmodSync(d, mode);
  };
}

function started(p: ChildProcess, pattern: RegExp): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`did not start: ${out}`)), 60_000);
    const on = (c: Buffer) => {
      out += c.toString();
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1] ?? m[0]);
      }
    };
    p.stdout!.on('data', on);
    p.stderr!.on('data', on);
    p.once('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

describe('the signer apart from the writer (two users)', { skip: process.getuid?.() !== 0 && 'needs root to make the users' }, () => {
  it('keeps the key unreadable to the store owner while every commit is signed through the socket', async () => {
    const ids = ensureUsers();
    const restore = openPathToRepo();
    const base = mkdtempSync('/tmp/vigil-two-users-');
    chmodSync(base, 0o755);
    const credentials = join(base, 'credentials');
    const state = join(base, 'signer-state');
    const run = join(base, 'run');
    const data = join(base, 'data');
    for (const [d, uid, gid, mode] of [
      [credentials, ids.signer, ids.signer, 0o700],
      [state, ids.signer, ids.signer, 0o700],
      [run, ids.signer, ids.group, 0o750],
      [data, ids.writer, ids.writer, 0o700],
    ] as const) {
      mkdirSync(d);
      chownSync(d, uid, gid);
      chmodSync(d, mode);
    }
    const keyFile = join(credentials, 'log-signing.key');
    const socket = join(run, 'signer.sock');
    const procs: ChildProcess[] = [];
    try {
      const made = sh('setpriv', [...as(SIGNER), process.execPath, CLI, 'signer', 'key', '--out', keyFile]);
      assert.equal(made.status, 0, made.stderr);
      const verifier = made.stdout.trim();
      const signer = spawn('setpriv', [...as(SIGNER, GROUP), process.execPath, CLI, 'signer', 'serve', '--key', keyFile, '--state', state, '--socket', socket], { stdio: ['ignore', 'pipe', 'pipe'] });
      procs.push(signer);
      await started(signer, /head signer listening/);
      assert.equal(statSync(socket).mode & 0o777, 0o660);
      assert.equal(statSync(socket).gid, ids.group);

      const config = join(data, 'vigil.config.json');
      writeFileSync(config, JSON.stringify({
        server: { host: '127.0.0.1', port: 0, allowLoopbackAdmin: false },
        auth: { credentialsFile: join(data, 'secrets', 'credentials.json') },
        storage: { path: join(data, 'store') },
        log: { signer: { socket }, checkpointEverySeconds: 1 },
      }));
      chownSync(config, ids.writer, ids.writer);
      const writer = (args: string[]) => sh('setpriv', [...as(WRITER), process.execPath, CLI, ...args]);
      const token = (JSON.parse(writer(['api-token-generate', 'loader', 'ingestor', '--config', config]).stdout) as { token: string }).token;

      // The store's owner cannot read the key, nor the signer's state; it can reach the socket.
      const read = sh('setpriv', [...as(WRITER), process.execPath, '-e', `require('fs').readFileSync(${JSON.stringify(keyFile)})`]);
      assert.notEqual(read.status, 0);
      assert.match(read.stderr, /EACCES/);

      const serve = spawn('setpriv', [...as(WRITER), process.execPath, CLI, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
      procs.push(serve);
      const url = await started(serve, /"msg":"listening","url":"([^"]+)"/);
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify([makeEvent({ id: `two-users-${i}` })]),
        });
        assert.equal(res.status, 202);
      }
      serve.kill('SIGTERM');
      assert.equal(await new Promise((r) => serve.once('exit', r)), 0);

      // Every commit was signed by the signer's key, which the writer only knows as a verifier key.
      const verify = writer(['log', 'verify', '--config', config]);
      assert.equal(verify.status, 0, verify.stdout + verify.stderr);
      const verdict = JSON.parse(verify.stdout) as { records: number; tree: { attested: number } };
      assert.equal(verdict.tree.attested, verdict.records);
      assert.equal(writer(['log', 'public-key', '--config', config]).stdout.trim(), verifier);
    } finally {
      for (const p of procs) p.kill('SIGKILL');
      restore();
      rmSync(base, { recursive: true, force: true });
    }
  });
});
