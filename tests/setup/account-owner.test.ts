import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { runnableAs, type RunnableAs } from '../helpers/as-user.js';
import { tempDir } from '../helpers/temp.js';
import { listeningUrl, stopChild, waitFor, type Child } from './processes.js';

const root = process.geteuid?.() === 0;
const skip = !root ? 'needs root: it creates a system user and runs the authority as it'
  : !existsSync('/usr/sbin/useradd') || !existsSync('/usr/bin/setpriv') ? 'needs useradd and setpriv (Debian: passwd, util-linux)' : false;
const NOBODY = 65534;

/** The command line of `vigil ...args` as another user (setpriv: that uid and gid, no supplementary groups). */
function asUserArgs(run: RunnableAs, uid: number, gid: number, args: string[]): string[] {
  return [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', run.node, run.repo('dist', 'src', 'cli', 'main.js'), ...args];
}

/** `vigil ...args` running as another user. */
function asUser(run: RunnableAs, uid: number, gid: number, args: string[]): Child {
  const proc = spawn('setpriv', asUserArgs(run, uid, gid, args), { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

async function signIn(url: string, token: string): Promise<number> {
  const r = await fetch(`${url}/v1/browser-sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  await r.arrayBuffer();
  return r.status;
}

describe('account commands against an authority that runs as its own user', { skip }, () => {
  const user = `vigil-t${process.pid}`;
  const dir = tempDir('vigil-account-owner-');
  const state = join(dir.path, 'authority');
  const accounts = join(state, 'secrets', 'accounts.json');
  const cfg = join(dir.path, 'authority.json');
  let uid = -1;
  let gid = -1;
  let authority: Child | undefined;
  let run: RunnableAs;
  let nobody: RunnableAs;

  before(() => {
    const made = spawnSync('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', user], { encoding: 'utf8' });
    assert.equal(made.status, 0, made.stderr);
    uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout.trim());
    gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout.trim());
    run = runnableAs(uid, gid);
    nobody = runnableAs(NOBODY, NOBODY);
    chmodSync(dir.path, 0o755);
    // The walkthrough: the authority's state folder belongs to its service user; the config is root's, readable.
    mkdirSync(state, { mode: 0o700 });
    chownSync(state, uid, gid);
    writeFileSync(cfg, JSON.stringify({
      server: { host: '127.0.0.1', port: 0 }, storage: { path: 'authority/store' }, accounts: { file: 'authority/secrets/accounts.json' },
      recovery: { keyFile: 'authority/secrets/recovery.key' },
    }), { mode: 0o644 });
  });

  after(async () => {
    if (authority) await stopChild(authority);
    dir.cleanup();
    run?.cleanup();
    nobody?.cleanup();
    spawnSync('userdel', [user]);
  });

  const add = (userId: string) => {
    const r = runCli(['setup-authority', 'account', 'add', 't-acme', userId, '--email', `${userId}@example.test`, '--config', cfg]);
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout).token as string;
  };
  const owner = (path: string) => { const s = statSync(path); return { uid: s.uid, gid: s.gid, mode: s.mode & 0o777 }; };

  it('a root account add in the service user\'s folder leaves files that user owns, and it signs in', async () => {
    const alice = add('alice');
    assert.deepEqual(owner(join(state, 'secrets')), { uid, gid, mode: 0o700 }, 'the new folder takes its parent\'s owner');
    assert.deepEqual(owner(accounts), { uid, gid, mode: 0o600 }, 'the new registry takes its folder\'s owner');
    authority = asUser(run, uid, gid, ['setup-authority', 'serve', '--config', cfg]);
    const url = await listeningUrl(authority);
    assert.equal(await signIn(url, alice), 201);

    // Rewrites by root keep the owner and mode: the running service still reads the registry.
    const bob = add('bob');
    assert.deepEqual(owner(accounts), { uid, gid, mode: 0o600 });
    await waitFor('bob signs in', async () => (await signIn(url, bob)) === 201 || undefined, 15_000);
    assert.equal(await signIn(url, alice), 201, 'alice still signs in');
    const disabled = runCli(['setup-authority', 'account', 'disable', 't-acme', 'alice', '--config', cfg]);
    assert.equal(disabled.status, 0, disabled.stderr);
    assert.deepEqual(owner(accounts), { uid, gid, mode: 0o600 });
    await waitFor('alice is refused', async () => (await signIn(url, alice)) === 401 || undefined, 15_000);
    assert.equal(await signIn(url, bob), 201, 'the registry is loaded, not refusing every token');
    assert.doesNotMatch(authority.output(), /not loaded|EACCES/);
    assert.deepEqual(owner(join(state, 'secrets', 'recovery.key')).uid, uid, 'the service made its own key');
  });

  it('a user who is neither root nor the owner is refused before anything is written, told whom to run as', () => {
    const before = readFileSync(accounts, 'utf8');
    const r = spawnSync('setpriv', asUserArgs(nobody, NOBODY, NOBODY, ['setup-authority', 'account', 'add', 't-acme', 'carol', '--config', cfg]), { encoding: 'utf8' });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.equal(r.stderr, `vigil: ${accounts} belongs to ${user}: run this as ${user} (sudo -u ${user} vigil ...)\n`);
    assert.equal(r.stdout, '', 'no token is shown');
    assert.equal(readFileSync(accounts, 'utf8'), before);
    assert.deepEqual(owner(accounts), { uid, gid, mode: 0o600 });
    // As the owner, as the message says, it works.
    const asOwner = spawnSync('setpriv', asUserArgs(run, uid, gid, ['setup-authority', 'account', 'add', 't-acme', 'carol', '--email', 'carol@example.test', '--config', cfg]), { encoding: 'utf8' });
    assert.equal(asOwner.status, 0, asOwner.stderr);
    assert.deepEqual(owner(accounts), { uid, gid, mode: 0o600 });
  });
});
