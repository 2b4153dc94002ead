import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { writeAccounts, readAccounts } from '../../src/setup/accounts.js';
import { startTestAuthority, type TestAuthority } from './harness.js';

describe('setup authority browser accounts', () => {
  let t: TestAuthority;
  before(async () => { t = await startTestAuthority(); });
  after(async () => { await t.close(); });

  it('signs in with an account token and sets an HttpOnly SameSite=Strict cookie', async () => {
    const r = await t.json('/v1/browser-sessions', { body: { token: t.tokens.alice } });
    assert.equal(r.status, 201);
    const cookie = r.headers.get('set-cookie') ?? '';
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Strict/);
    assert.ok(!cookie.includes(t.tokens.alice));
    assert.equal(r.body.tenant_id, 't-acme');
    assert.equal((await t.json('/v1/browser-sessions', { body: { token: 'lsa_' + 'x'.repeat(43) } })).status, 401);
  });

  it('refuses session creation without a browser session (401), without the CSRF header or cross-site (403)', async () => {
    assert.equal((await t.json('/v1/setup-sessions', { body: {} })).status, 401);
    const alice = await t.signIn('alice');
    assert.equal((await t.json('/v1/setup-sessions', { body: {}, browser: alice, headers: { 'x-csrf-token': 'lsx_wrong' } })).status, 403);
    assert.equal((await t.json('/v1/setup-sessions', { body: {}, browser: alice, headers: { origin: 'https://evil.example' } })).status, 403);
    assert.equal((await t.json('/v1/setup-sessions', { body: {}, browser: alice, headers: { 'sec-fetch-site': 'cross-site' } })).status, 403);
    assert.equal((await t.json('/v1/browser-sessions', { body: { token: t.tokens.alice }, headers: { origin: 'https://evil.example' } })).status, 403);
    assert.equal((await t.json('/v1/setup-sessions', { body: {}, browser: alice, headers: { origin: 'http://authority.test' } })).status, 201);
  });

  it('rejects a body that tries to carry the tenant or user', async () => {
    const alice = await t.signIn('alice');
    for (const body of [{ tenant_id: 't-other' }, { user_id: 'mallory' }, { anything: 1 }]) {
      const r = await t.json('/v1/setup-sessions', { body, browser: alice });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.ok(Array.isArray(r.body.issues));
    }
  });

  it("answers another tenant's session with 404 and the same tenant's with 200", async () => {
    const alice = await t.signIn('alice');
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    const id = created.body.session_id;
    const carol = await t.json(`/v1/setup-sessions/${id}`, { browser: await t.signIn('carol') });
    assert.equal(carol.status, 404);
    assert.equal((await t.json('/v1/setup-sessions/ss_doesnotexist0000000000', { browser: alice })).status, 404);
    const bob = await t.json(`/v1/setup-sessions/${id}`, { browser: await t.signIn('bob') });
    assert.equal(bob.status, 200);
    assert.equal(bob.body.status, 'created');
    assert.ok(!JSON.stringify(bob.body).includes(created.body.setup_token), 'polling never shows the setup token');
  });

  it('ends the sessions of a disabled account and on sign-out', async () => {
    const bob = await t.signIn('bob');
    const accounts = readAccounts(t.config.accounts.file);
    writeAccounts(t.config.accounts.file, accounts.map((a) => (a.userId === 'bob' ? { ...a, disabled: true } : a)));
    assert.equal((await t.json('/v1/setup-sessions', { body: {}, browser: bob })).status, 401);
    writeAccounts(t.config.accounts.file, accounts);
    const alice = await t.signIn('alice');
    assert.equal((await t.json('/v1/browser-sessions/current', { method: 'DELETE', browser: alice })).status, 204);
    assert.equal((await t.json('/v1/setup-sessions', { body: {}, browser: alice })).status, 401);
  });

  it('serves a sign-in page whose form posts the token in its body under a strict CSP', async () => {
    const r = await t.json('/sign-in');
    assert.equal(r.status, 200);
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'; script-src 'self'/);
    assert.ok(!csp.includes('unsafe-inline'));
    assert.match(r.body, /<form method="post" action="\/sign-in"/);
    assert.match(r.body, /type="password"/);
  });
});
