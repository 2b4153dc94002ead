import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

describe('vigil api-token-generate and credential', () => {
  it('prints {token, credential} once and stores only the hash, 0600 in a 0700 folder', () => {
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path);
      const r = runCli(['api-token-generate', 'ops-bot', 'ingestor', '--expires-at', '2030-01-01T00:00:00Z', '--config', config]);
      assert.equal(r.status, 0, r.stderr);
      const { token, credential, fingerprint } = JSON.parse(r.stdout) as { token: string; credential: Record<string, unknown>; fingerprint: string };
      assert.match(token, /^vgl_[A-Za-z0-9_-]{43}$/);
      assert.deepEqual(Object.keys(credential).sort(), ['createdAt', 'disabled', 'expiresAt', 'id', 'roles', 'tokenHash']);
      assert.ok(Math.abs(Date.parse(credential.createdAt as string) - Date.now()) < 3_600_000, 'createdAt is the time of creation');
      assert.equal(fingerprint, (credential.tokenHash as string).slice(0, 12), 'the fingerprint disable --fingerprint takes');
      const file = join(dir.path, 'secrets', 'credentials.json');
      const stored = readFileSync(file, 'utf8');
      assert.equal(stored.includes(token), false);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      assert.equal(statSync(join(dir.path, 'secrets')).mode & 0o777, 0o700);
      const list = runCli(['credential', 'list', '--config', config]);
      assert.deepEqual((JSON.parse(list.stdout) as Array<{ fingerprint: string; createdAt: string }>).map((c) => [c.fingerprint, c.createdAt]), [[fingerprint, credential.createdAt]]);
      assert.equal(list.stdout.includes(token), false);
      assert.equal(list.stdout.includes(credential.tokenHash as string), false);
      assert.equal(runCli(['api-token-generate', 'x', 'superuser', '--config', config]).status, 2);
      assert.equal(runCli(['api-token-generate', 'x', 'viewer', '--collector-id', 'c1', '--config', config]).status, 2);
    } finally { dir.cleanup(); }
  });

  it('refuses to start serve on a group-readable credentials file, naming the path and the fix', () => {
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path);
      assert.equal(runCli(['api-token-generate', 'a', 'viewer', '--config', config]).status, 0);
      const file = join(dir.path, 'secrets', 'credentials.json');
      chmodSync(file, 0o640);
      let r = runCli(['serve', '--config', config]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, new RegExp(`refusing to start: ${file.replace(/[/.]/g, '\\$&')} is readable or writable by group or others \\(mode 640\\); run: chmod 600`));
      chmodSync(file, 0o600);
      chmodSync(join(dir.path, 'secrets'), 0o755);
      r = runCli(['serve', '--config', config]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /is accessible to group or others \(mode 755\); run: chmod 700/);
    } finally { dir.cleanup(); }
  });

  it('refuses a config with an unknown key or a bad value, naming the key', () => {
    const dir = tempDir();
    try {
      const config = writeTestConfig(dir.path, { server: { port: 'x', colour: 'red' }, limits: { bodyBytes: -1 } });
      const r = runCli(['serve', '--config', config]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /server\.port: Invalid type/);
      assert.match(r.stderr, /server\.colour: unknown key/);
      assert.match(r.stderr, /limits\.bodyBytes:/);
    } finally { dir.cleanup(); }
  });

  it('rotates a credential without a restart: new token works, disabled old one gets 401', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const old = JSON.parse(runCli(['api-token-generate', 'svc', 'viewer', '--config', config]).stdout) as { token: string };
    const serve = await startServe(config, dir.path);
    try {
      const me = (token: string) => fetch(`${serve.url}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
      assert.equal(await me(old.token), 200);
      const fresh = JSON.parse(runCli(['api-token-generate', 'svc', 'viewer', '--config', config]).stdout) as { token: string; credential: { tokenHash: string } };
      const oldFingerprint = (JSON.parse(runCli(['credential', 'list', '--config', config]).stdout) as Array<{ fingerprint: string }>)
        .map((c) => c.fingerprint).find((f) => !fresh.credential.tokenHash.startsWith(f))!;
      const ambiguous = runCli(['credential', 'disable', 'svc', '--config', config]);
      assert.equal(ambiguous.status, 1);
      assert.match(ambiguous.stderr, /has 2 credentials/);
      assert.equal(runCli(['credential', 'disable', 'svc', '--fingerprint', oldFingerprint, '--config', config]).status, 0);
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(await me(fresh.token), 200);
      assert.equal(await me(old.token), 401);
      assert.equal(runCli(['credential', 'enable', 'svc', '--fingerprint', oldFingerprint, '--config', config]).status, 0);
      await new Promise((r) => setTimeout(r, 700));
      assert.equal(await me(old.token), 200);
      assert.equal(serve.output().includes(old.token), false, 'no token in the service output');
    } finally {
      serve.proc.kill('SIGTERM');
      await serve.exited;
      dir.cleanup();
    }
  });

  it('makes a rotation verifiable: the log records creation, disabling and enabling by fingerprint, and audit entries name the credential used', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const gen = (principal: string, role: string) => JSON.parse(runCli(['api-token-generate', principal, role, '--config', config]).stdout) as { token: string; fingerprint: string };
    const auditor = gen('auditor', 'admin');
    const old = gen('svc', 'viewer');
    const serve = await startServe(config, dir.path);
    try {
      const get = async <T>(path: string, token: string) => (await fetch(`${serve.url}${path}`, { headers: { authorization: `Bearer ${token}` } })).json() as Promise<T>;
      type View = { id: string; fingerprint: string; disabled: boolean; createdAt?: string; lastUsedAt?: string; history: Array<{ change: string }> };
      /** Polls the recorded credentials until `done` holds (the service notices the file within about a second). */
      const until = async (done: (views: View[]) => boolean): Promise<View[]> => {
        for (let i = 0; i < 600; i++) {
          const { credentials } = await get<{ credentials: View[] }>('/api/v1/credentials', auditor.token);
          if (done(credentials)) return credentials;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.fail('the credential changes were not recorded');
      };
      assert.equal((await fetch(`${serve.url}/api/v1/me`, { headers: { authorization: `Bearer ${old.token}` } })).status, 200);
      const fresh = gen('svc', 'viewer');
      assert.equal(runCli(['credential', 'disable', 'svc', '--fingerprint', old.fingerprint, '--config', config]).status, 0);
      const views = await until((v) => v.some((c) => c.fingerprint === fresh.fingerprint) && v.some((c) => c.fingerprint === old.fingerprint && c.disabled));
      const oldView = views.find((c) => c.fingerprint === old.fingerprint)!;
      assert.deepEqual(oldView.history.map((h) => h.change), ['added', 'disabled']);
      assert.equal(oldView.id, 'svc');
      assert.ok(oldView.createdAt && oldView.lastUsedAt, 'created and last used are known');
      assert.equal(runCli(['credential', 'enable', 'svc', '--fingerprint', old.fingerprint, '--config', config]).status, 0);
      const later = await until((v) => v.some((c) => c.fingerprint === old.fingerprint && !c.disabled));
      // The audit trail names the credential of each request, and the changes are events an auditor can list.
      const audit = await get<{ entries: Array<{ principal: string; credential?: string; route: string }> }>('/api/v1/audit?principal=svc', auditor.token);
      assert.ok(audit.entries.some((e) => e.route === '/api/v1/me' && e.credential === old.fingerprint), JSON.stringify(audit.entries));
      const byOld = await get<{ entries: Array<{ credential?: string }> }>(`/api/v1/audit?credential=${old.fingerprint}`, auditor.token);
      assert.ok(byOld.entries.length > 0 && byOld.entries.every((e) => e.credential === old.fingerprint), 'the audit trail filters by credential');
      const events = await get<{ events: Array<{ activity: string; attributes: { credential: string } }> }>('/api/v1/events?class=credential_change', auditor.token);
      assert.deepEqual(events.events.filter((e) => e.attributes.credential === old.fingerprint).map((e) => e.activity).reverse(), ['added', 'disabled', 'enabled']);
      // Each read is audited after it is answered: the earlier reads of the auditor are its last use.
      const mine = later.find((c) => c.fingerprint === auditor.fingerprint)!;
      assert.ok(mine.lastUsedAt, 'the auditor\'s own credential was used by the earlier reads');
    } finally {
      serve.proc.kill('SIGTERM');
      await serve.exited;
      dir.cleanup();
    }
  });
});
