import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readRegistry, writeRegistry } from '../../src/auth/registry.js';
import { hashToken } from '../../src/auth/tokens.js';
import { createMeshIdentity } from '../../src/auth/mesh-identity.js';
import type { WhoIsAnswer } from '../../src/auth/mesh-localapi.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { cookieFrom, signIn } from '../helpers/console-sign-in.js';
import { ALICE_USER_ID, WHOIS_USER_NODE } from '../helpers/localapi-stand-in.js';

const page = (t: TestInstance, path: string, cookie?: string) => t.app.request(`http://localhost${path}`, { headers: { accept: 'text/html', ...(cookie ? { cookie } : {}) } });
const records = (t: TestInstance, type: string) => [...t.inst.log.read(1)].filter((r) => r.type === type);

describe('console sessions', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance({ console: { sessionIdleMinutes: 30, sessionMaxHours: 2 } }); });
  after(async () => { await t.close(); });

  it('starts a session in the log with only the SHA-256 of its secret, and ends it on sign-out', async () => {
    t.setNow('2026-11-22T10:00:00.000Z');
    const { res, cookie, secret } = await signIn(t, t.tokens.analyst);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get('location'), '/alerts');
    assert.match(res.headers.getSetCookie().join('\n'), /vigil-console=vcs_[^;]+; Max-Age=7200; Path=\/; HttpOnly; SameSite=Strict/);
    const started = records(t, 'ConsoleSessionStarted').at(-1)!;
    assert.deepEqual(started.data, { sessionHash: hashToken(secret!), principal: 'analyst-user', authentication: 'bearer', expiresAt: '2026-11-22T12:00:00.000Z', idleMinutes: 30, sourceAddress: 'unknown' });
    const everything = JSON.stringify([...t.inst.log.read(1)]);
    assert.ok(!everything.includes(secret!), 'the session secret is not in the log');
    assert.ok(!everything.includes(t.tokens.analyst), 'the token is not in the log');
    assert.equal((await page(t, '/alerts', cookie)).status, 200);
    const signedIn = await (await page(t, '/', cookie)).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(signedIn)![1]!;
    const out = await t.app.request('http://localhost/sign-out', { method: 'POST', headers: { cookie: cookie!, 'content-type': 'application/x-www-form-urlencoded' }, body: `_csrf=${csrf}` });
    assert.equal(out.status, 303);
    assert.match(out.headers.getSetCookie().join('\n'), /vigil-console=; Max-Age=0/);
    assert.deepEqual(records(t, 'ConsoleSessionEnded').at(-1)!.data, { sessionHash: hashToken(secret!), principal: 'analyst-user', reason: 'signed_out' });
    const after = await page(t, '/alerts', cookie);
    assert.equal(after.status, 303, 'an ended session opens nothing');
    assert.match(after.headers.get('location')!, /^\/sign-in\?next=%2Falerts/);
  });

  it('records each page request as the API does: an access event and an audit record with who and how', async () => {
    t.setNow('2026-11-22T10:05:00.000Z');
    const { cookie } = await signIn(t, t.tokens.viewer);
    const head = t.inst.log.head().seq;
    assert.equal((await page(t, '/incidents', cookie)).status, 200);
    const written = [...t.inst.log.read(head + 1)];
    const audit = written.find((r) => r.type === 'ApiRequestAudited')!.data as Record<string, unknown>;
    assert.deepEqual([audit['principal'], audit['authentication'], audit['method'], audit['route'], audit['status']], ['viewer-user', 'console_session', 'GET', '/incidents', 200]);
    const access = (written.find((r) => r.type === 'AccessRecorded')!.data as { event: { activity: string; actor: { user: string } } }).event;
    assert.equal(access.activity, 'console_incidents');
    assert.equal(access.actor.user, 'viewer-user');
    // A refused page is recorded with its refusal.
    assert.equal((await page(t, '/audit', cookie)).status, 403);
    const refused = [...t.inst.log.read(head + 1)].filter((r) => r.type === 'ApiRequestAudited').at(-1)!.data as Record<string, unknown>;
    assert.deepEqual([refused['route'], refused['status']], ['/audit', 403]);
  });

  it('ends a session idle past its timeout, and one past its absolute end however active', async () => {
    t.setNow('2026-11-22T11:00:00.000Z');
    const idle = await signIn(t, t.tokens.analyst);
    t.setNow('2026-11-22T11:31:00.000Z');
    assert.equal((await page(t, '/', idle.cookie)).status, 303);
    assert.equal((records(t, 'ConsoleSessionEnded').at(-1)!.data as { reason: string }).reason, 'idle');

    const busy = await signIn(t, t.tokens.analyst);
    for (let minute = 20; minute < 120; minute += 20) {
      t.setNow(new Date(Date.parse('2026-11-22T11:31:00.000Z') + minute * 60_000).toISOString());
      assert.equal((await page(t, '/', busy.cookie)).status, 200, `minute ${minute}`);
    }
    t.setNow('2026-11-22T13:31:00.000Z');
    assert.equal((await page(t, '/', busy.cookie)).status, 303);
    assert.equal((records(t, 'ConsoleSessionEnded').at(-1)!.data as { reason: string }).reason, 'expired');
  });

  it('ends the sessions of a credential that is disabled', async () => {
    t.setNow('2026-11-22T14:00:00.000Z');
    const { cookie } = await signIn(t, t.tokens.rule_admin);
    assert.equal((await page(t, '/rules', cookie)).status, 200);
    writeRegistry(t.credentialsFile, readRegistry(t.credentialsFile).map((c) => (c.id === 'rule_admin-user' ? { ...c, disabled: true } : c)));
    assert.equal((await page(t, '/rules', cookie)).status, 303);
    const started = records(t, 'ConsoleSessionStarted').at(-1)!.data as { sessionHash: string };
    assert.deepEqual(records(t, 'ConsoleSessionEnded').at(-1)!.data, { sessionHash: started.sessionHash, principal: 'rule_admin-user', reason: 'credential_revoked' });
  });

  it('sets a __Host- prefixed Secure cookie when served over TLS', async () => {
    const { res } = await signIn(t, t.tokens.analyst, 'https://localhost');
    assert.equal(res.status, 303);
    assert.match(res.headers.getSetCookie().join('\n'), /^__Host-vigil-console=vcs_[^;]+; Max-Age=7200; Path=\/; HttpOnly; Secure; SameSite=Strict$/m);
  });

  it('refuses a sign-in form without its token, and one from another origin', async () => {
    const body = new URLSearchParams({ token: t.tokens.admin }).toString();
    const form = (headers: Record<string, string>) => t.app.request('http://localhost/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), ...headers }, body });
    const noToken = await form({});
    assert.equal(noToken.status, 403);
    assert.equal(cookieFrom(noToken, 'vigil-console'), undefined);
    assert.equal((await form({ origin: 'https://evil.example', host: 'localhost' })).status, 403);
  });
});

describe('console without sign-in: loopback administration', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance({ server: { allowLoopbackAdmin: true } }); });
  after(async () => { await t.close(); });

  it('opens every page to the loopback administrator, and still asks forms for the CSRF token', async () => {
    t.setPeer('127.0.0.1');
    const overview = await page(t, '/');
    assert.equal(overview.status, 200);
    const html = await overview.text();
    assert.match(html, /Local administrator/);
    assert.doesNotMatch(html, /Sign out/, 'nothing to sign out of');
    for (const path of ['/alerts', '/incidents', '/plan', '/graph', '/events', '/rules', '/audit']) assert.equal((await page(t, path)).status, 200, path);
    const rules = await (await page(t, '/rules')).text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(rules)![1]!;
    const post = (fields: Record<string, string>) => t.app.request('http://localhost/rules/import', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
    assert.equal((await post({ yaml: 'title: x' })).status, 403, 'no token');
    assert.equal((await post({ yaml: 'title: x', _csrf: csrf })).status, 400, 'with its token the import runs (and says what is wrong)');
    t.setPeer('203.0.113.5');
    assert.equal((await page(t, '/')).status, 303, 'anyone else signs in');
  });
});

describe('console without sign-in: mesh identity', () => {
  it('opens pages to an allow-listed mesh identity with its roles, and sends an unknown peer to sign in', async () => {
    let answer: WhoIsAnswer = { kind: 'found', body: WHOIS_USER_NODE };
    const mesh = createMeshIdentity({
      peerRanges: ['100.64.0.0/10'], whois: async () => answer, allowlist: () => [{ user: ALICE_USER_ID, roles: ['viewer'] }],
      nowMs: () => performance.now(), cacheMs: 0, cacheEntries: 16, maxInFlight: 16, onProblem: () => {},
    });
    const t = await startTestInstance({}, { mesh });
    try {
      t.setPeer('100.64.0.7');
      const overview = await page(t, '/');
      assert.equal(overview.status, 200);
      assert.match(await overview.text(), /viewer · mesh/);
      assert.equal((await page(t, '/alerts')).status, 200);
      assert.equal((await page(t, '/audit')).status, 403, 'a viewer, as the allowlist says');
      answer = { kind: 'unknown' };
      const unknown = await page(t, '/');
      assert.equal(unknown.status, 303);
      assert.match(unknown.headers.get('location')!, /^\/sign-in/);
    } finally {
      await t.close();
    }
  });
});

describe('console sign-in under a flood of bad tokens', () => {
  it('throttles the failing sign-ins of an address, never a valid token from it', async () => {
    const t = await startTestInstance({ limits: { authFailures: { burst: 2, perMinute: 1 } } });
    try {
      t.setPeer('198.51.100.9');
      assert.equal((await signIn(t, 'vgl_guess-1')).res.status, 401);
      assert.equal((await signIn(t, 'vgl_guess-2')).res.status, 401);
      const throttled = (await signIn(t, 'vgl_guess-3')).res;
      assert.equal(throttled.status, 429, 'a third bad token waits');
      assert.ok(Number(throttled.headers.get('retry-after')) > 0);
      const valid = await signIn(t, t.tokens.analyst);
      assert.equal(valid.res.status, 303, 'a valid token from the throttled address signs in');
      assert.ok(valid.cookie);
    } finally {
      await t.close();
    }
  });
});
