import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/auth/tokens.js';
import { CSRF_FIELD } from '../../src/http/web/csrf.js';
import { formToken, page, provision, sendSnapshot, startTestAuthority, type Browser, type TestAuthority } from './harness.js';

/** Asserts the headers and the markup a strict CSP needs: no inline script or style anywhere. */
function assertStrictPage(r: { headers: Headers; text: string }): void {
  const csp = r.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.match(csp, /style-src 'self'(;|$)/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.ok(!csp.includes('unsafe-inline') && !csp.includes('unsafe-eval'), csp);
  assert.equal(r.headers.get('x-frame-options'), 'DENY');
  assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
  assert.equal(r.headers.get('cache-control'), 'no-store');
  for (const tag of r.text.match(/<script\b[^>]*>/g) ?? []) assert.match(tag, /\bsrc="\/assets\//, `inline script: ${tag}`);
  assert.ok(!/\sstyle=|<style\b|\son[a-z]+=/i.test(r.text), 'no inline style or event handler attribute');
}

describe('setup authority pages', () => {
  let t: TestAuthority;
  let alice: Browser;
  before(async () => {
    t = await startTestAuthority();
    alice = await t.signIn('alice');
  });
  after(async () => { await t.close(); });

  it('sends a browser without a session to the sign-in page and signs in with a form', async () => {
    const home = await page(t, '/');
    assert.equal(home.status, 303);
    assert.equal(home.headers.get('location'), '/sign-in');
    assert.equal((await page(t, '/setup-sessions/ss_0123456789012345678901')).headers.get('location'), '/sign-in?next=%2Fsetup-sessions%2Fss_0123456789012345678901');
    const form = await page(t, '/sign-in?next=/setup-sessions/ss_0123456789012345678901');
    assert.equal(form.status, 200);
    assertStrictPage(form);
    assert.match(form.text, /<form method="post" action="\/sign-in"/);
    const pre = /^(vigil-setup-sign-in=[A-Za-z0-9_-]{22});/.exec(form.headers.get('set-cookie') ?? '')?.[1];
    assert.ok(pre, 'the sign-in page binds its form to a pre-session cookie');
    const csrf = formToken(form.text);
    const fields = { [CSRF_FIELD]: csrf, token: t.tokens.alice, next: '/setup-sessions/ss_0123456789012345678901' };
    const wrong = await page(t, '/sign-in', { cookie: pre, form: { ...fields, token: `lsa_${'x'.repeat(43)}` } });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /Unknown or disabled account token/);
    assert.ok(!(wrong.headers.get('set-cookie') ?? '').includes('vigil-setup='), 'no session cookie');
    assert.equal((await page(t, '/sign-in', { form: fields })).status, 403, 'no pre-session cookie (login CSRF)');
    assert.equal((await page(t, '/sign-in', { cookie: pre, form: { ...fields, [CSRF_FIELD]: 'forged' } })).status, 403, 'wrong form token');
    assert.equal((await page(t, '/sign-in', { cookie: pre, form: fields, origin: 'https://evil.example' })).status, 403);
    assert.equal((await page(t, '/sign-in', { cookie: pre, form: fields, site: 'cross-site' })).status, 403);
    const ok = await page(t, '/sign-in', { cookie: pre, form: fields });
    assert.equal(ok.status, 303);
    assert.equal(ok.headers.get('location'), '/setup-sessions/ss_0123456789012345678901', 'back to the page that asked');
    const cookie = /(vigil-setup=lsb_[^;]+)/.exec(ok.headers.get('set-cookie') ?? '')?.[1];
    assert.ok(cookie, 'a session cookie is set');
    assert.match(ok.headers.get('set-cookie')!, /HttpOnly/);
    assert.match(ok.headers.get('set-cookie')!, /SameSite=Strict/);
    const elsewhere = await page(t, '/sign-in', { cookie: pre, form: { ...fields, next: '//evil.example/' } });
    assert.equal(elsewhere.headers.get('location'), '/', 'never another site');
    const overview = await page(t, '/', { cookie });
    assert.equal(overview.status, 200);
    assertStrictPage(overview);
    assert.match(overview.text, /Create setup session/);
  });

  it('creates a setup session from a form, shows its token once with the installer command, never in a URL', async () => {
    const overview = await page(t, '/', { cookie: alice.cookie });
    const csrf = formToken(overview.text);
    assert.notEqual(csrf, alice.csrf, 'the form token is not the API header token');
    const created = await page(t, '/setup-sessions', { cookie: alice.cookie, form: { [CSRF_FIELD]: csrf } });
    assert.equal(created.status, 200);
    assertStrictPage(created);
    const token = /value="(lst_[A-Za-z0-9_-]{43})"/.exec(created.text)?.[1];
    assert.ok(token, 'the setup token is on the page');
    assert.equal(created.text.split(token).length - 1, 1, 'shown exactly once');
    assert.match(created.text, /vigil install --setup-url http:\/\/authority\.test --token-file setup-token --inventory inventory\.json --transport ssh /);
    assert.match(created.text, /<p class="muted" id="staging-note">--transport directory:DIR only stages/, 'the directory transport only as staging');
    assert.match(created.text, /umask 077 &amp;&amp; cat &gt; setup-token/);
    const sessionId = /href="\/setup-sessions\/(ss_[A-Za-z0-9_-]{22})"/.exec(created.text)?.[1];
    assert.ok(sessionId);
    for (const href of created.text.match(/(href|src|action)="[^"]*"/g) ?? []) assert.ok(!href.includes(token), `the token is in ${href}`);
    const session = [...t.store.log.read(1)].find((r) => r.type === 'SetupSessionCreated' && (r.data as { sessionId: string }).sessionId === sessionId);
    assert.equal((session!.data as { tokenHash: string }).tokenHash, hashToken(token), 'the shown token is the session\'s');
    assert.equal(session!.actor?.id, 't-acme/alice');
    const status = await page(t, `/setup-sessions/${sessionId}`, { cookie: alice.cookie });
    assert.equal(status.status, 200);
    assertStrictPage(status);
    assert.ok(!status.text.includes(token), 'the session page never shows the token again');
    assert.match(status.text, /Waiting for the installer to connect/);
  });

  it('refuses a form without the CSRF token, with another session\'s token, or from another origin', async () => {
    const bob = await t.signIn('bob');
    const bobCsrf = formToken((await page(t, '/', { cookie: bob.cookie })).text);
    const aliceCsrf = formToken((await page(t, '/', { cookie: alice.cookie })).text);
    const count = () => [...t.store.log.read(1)].filter((r) => r.type === 'SetupSessionCreated').length;
    const before = count();
    for (const [what, init] of [
      ['no token', { cookie: alice.cookie, form: {} }],
      ['the API header token', { cookie: alice.cookie, form: { [CSRF_FIELD]: alice.csrf } }],
      ["bob's token", { cookie: alice.cookie, form: { [CSRF_FIELD]: bobCsrf } }],
      ['another origin', { cookie: alice.cookie, form: { [CSRF_FIELD]: aliceCsrf }, origin: 'https://evil.example' }],
      ['a cross-site fetch', { cookie: alice.cookie, form: { [CSRF_FIELD]: aliceCsrf }, site: 'cross-site' }],
    ] as const) {
      const r = await page(t, '/setup-sessions', init);
      assert.equal(r.status, 403, what);
      assert.ok(JSON.parse(r.text).error, `${what}: an ErrorResponse`);
    }
    assert.equal((await page(t, '/setup-sessions', { form: { [CSRF_FIELD]: aliceCsrf } })).status, 401, 'no session');
    assert.equal(count(), before, 'nothing was created');
  });

  it('shows a session move through claim, proof and phases to completion with the systems and a console link', async () => {
    const p = await provision(t, alice);
    const claimed = await page(t, `/setup-sessions/${p.sessionId}`, { cookie: alice.cookie });
    assert.match(claimed.text, /Key possession proven/);
    assert.match(claimed.text, /No snapshot yet/);
    assert.ok(!claimed.text.includes('id="dashboard-link"'), 'no console link before completion');
    for (const phase of ['discovery_completed', 'central_install_started']) await t.json(`/v1/setup-sessions/${p.sessionId}/phases`, { body: { phase, detail: `<b>${phase}</b>` }, bearer: p.sessionToken });
    const systems = [{ id: 'vm-central', kind: 'central', live: true }, { id: 'syslog:vm-web', kind: 'source', live: true, last_seen_at: t.now().toISOString() }];
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { systems, systems_reporting_live: 2, instance_url: 'http://vm-central:4173' })).status, 202);
    const live = await page(t, `/setup-sessions/${p.sessionId}/live`, { cookie: alice.cookie });
    assert.equal(live.status, 200);
    assert.match(live.text, /^<div id="session-live"/);
    assert.match(live.text, /&lt;b&gt;discovery_completed&lt;\/b&gt;/, 'reported text is escaped');
    assert.match(live.text, /syslog:vm-web/);
    assert.match(live.text, /<b>2<\/b><span>systems reporting live/);
    assert.ok(!live.text.includes('id="dashboard-link"'));
    await t.json(`/v1/setup-sessions/${p.sessionId}/phases`, { body: { phase: 'completed' }, bearer: p.sessionToken });
    const done = await page(t, `/setup-sessions/${p.sessionId}`, { cookie: alice.cookie });
    assertStrictPage(done);
    assert.match(done.text, /id="dashboard-link" href="http:\/\/vm-central:4173\/"/);
    const json = await t.json(`/v1/setup-sessions/${p.sessionId}`, { browser: alice });
    assert.equal(json.body.dashboard_url, 'http://vm-central:4173/', 'the page links where the API points');
    assert.equal((await page(t, `/setup-sessions/${p.sessionId}/live`)).status, 401);
    const carol = await t.signIn('carol');
    assert.equal((await page(t, `/setup-sessions/${p.sessionId}`, { cookie: carol.cookie })).status, 404);
    assert.equal((await page(t, `/setup-sessions/${p.sessionId}/live`, { cookie: carol.cookie })).status, 404);
    const overview = await page(t, '/', { cookie: alice.cookie });
    assert.match(overview.text, new RegExp(p.deploymentId));
    assert.ok(!(await page(t, '/', { cookie: carol.cookie })).text.includes(p.deploymentId), "another tenant's deployment is not listed");
  });

  it('reveals the recovery token of a central_missing deployment once confirmed, to its own tenant only', async () => {
    const p = await provision(t, alice);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 202);
    t.advance(1000);
    assert.ok((await t.monitor.tick()).marked.includes(p.deploymentId));
    const overview = await page(t, '/', { cookie: alice.cookie });
    assert.match(overview.text, /lost the central VM/);
    const status = await page(t, `/setup-sessions/${p.sessionId}`, { cookie: alice.cookie });
    assert.match(status.text, /Recovery: the central VM stopped reporting/);
    assert.match(status.text, new RegExp(`action="/deployments/${p.deploymentId}/recovery-token"`));
    const csrf = formToken(status.text);
    const path = `/deployments/${p.deploymentId}/recovery-token`;
    const reveals = () => [...t.store.log.read(1)].filter((r) => r.type === 'RecoveryTokenRevealed').length;
    assert.equal((await page(t, path, { cookie: alice.cookie, form: { [CSRF_FIELD]: csrf } })).status, 400, 'unconfirmed');
    assert.equal((await page(t, path, { cookie: alice.cookie, form: { confirm: 'reveal' } })).status, 403, 'no CSRF token');
    const carol = await t.signIn('carol');
    const carolCsrf = formToken((await page(t, '/', { cookie: carol.cookie })).text);
    assert.equal((await page(t, path, { cookie: carol.cookie, form: { [CSRF_FIELD]: carolCsrf, confirm: 'reveal' } })).status, 404, 'another tenant');
    assert.equal(reveals(), 0);
    const revealed = await page(t, path, { cookie: alice.cookie, form: { [CSRF_FIELD]: csrf, confirm: 'reveal' } });
    assert.equal(revealed.status, 200);
    assertStrictPage(revealed);
    const token = /value="(lrc_[A-Za-z0-9_-]{43})"/.exec(revealed.text)?.[1];
    assert.ok(token);
    assert.equal(revealed.text.split(token).length - 1, 1, 'shown once');
    assert.match(revealed.text, /vigil install --recovery --setup-url http:\/\/authority\.test --token-file recovery-token/);
    assert.equal(reveals(), 1, 'the reveal is recorded');
    const issued = [...t.store.log.read(1)].find((r) => r.type === 'RecoveryTokenIssued' && (r.data as { deploymentId: string }).deploymentId === p.deploymentId);
    assert.equal((issued!.data as { tokenHash: string }).tokenHash, hashToken(token));
    const after = await page(t, `/setup-sessions/${p.sessionId}`, { cookie: alice.cookie });
    assert.ok(!after.text.includes(token), 'the session page never shows it');
    assert.match(after.text, /Last revealed/);
  });

  it('signs out with a form and forgets the session', async () => {
    const bob = await t.signIn('bob');
    const csrf = formToken((await page(t, '/', { cookie: bob.cookie })).text);
    assert.equal((await page(t, '/sign-out', { cookie: bob.cookie, form: {} })).status, 403);
    const out = await page(t, '/sign-out', { cookie: bob.cookie, form: { [CSRF_FIELD]: csrf } });
    assert.equal(out.status, 303);
    assert.equal(out.headers.get('location'), '/sign-in');
    assert.equal((await page(t, '/', { cookie: bob.cookie })).status, 303);
  });

  it('throttles failed sign-ins per address, on the form and the JSON route alike', async () => {
    const other = await startTestAuthority();
    try {
      const form = await page(other, '/sign-in');
      const pre = /^(vigil-setup-sign-in=[^;]+);/.exec(form.headers.get('set-cookie') ?? '')![1]!;
      const fields = { [CSRF_FIELD]: formToken(form.text), next: '/' };
      for (let i = 0; i < 20; i++) assert.equal((await page(other, '/sign-in', { cookie: pre, form: { ...fields, token: `lsa_${'y'.repeat(43)}` } })).status, 401, `attempt ${i + 1}`);
      const throttled = await page(other, '/sign-in', { cookie: pre, form: { ...fields, token: other.tokens.alice } });
      assert.equal(throttled.status, 429, 'even the right token waits');
      assert.ok(Number(throttled.headers.get('retry-after')) > 0);
      assert.match(throttled.text, /Too many failed sign-ins/);
      const json = await other.json('/v1/browser-sessions', { body: { token: other.tokens.alice } });
      assert.equal(json.status, 429);
      assert.ok(Number(json.headers.get('retry-after')) > 0);
      other.advance(60);
      assert.equal((await page(other, '/sign-in', { cookie: pre, form: { ...fields, token: other.tokens.alice } })).status, 303, 'the bucket refills');
    } finally {
      await other.close();
    }
  });

  it('serves the shared stylesheet and ES module as same-origin assets', async () => {
    const html = (await page(t, '/sign-in')).text;
    for (const m of html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)) {
      const r = await page(t, m[1]!.replaceAll('&amp;', '&'));
      assert.equal(r.status, 200, m[1]);
      assert.match(r.headers.get('content-type') ?? '', /^(text\/css|text\/javascript)/);
    }
  });
});
