import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CSRF_FIELD } from '../../src/http/web/csrf.js';
import { formToken, page, provision, sendSnapshot, startTestAuthority, type Browser, type TestAuthority } from './harness.js';

const abandonedRecords = (t: TestAuthority) => [...t.store.log.read(1)].filter((r) => r.type === 'DeploymentAbandoned');

describe('abandoning a deployment', () => {
  let t: TestAuthority;
  let alice: Browser;
  before(async () => {
    t = await startTestAuthority();
    alice = await t.signIn('alice');
  });
  after(async () => { await t.close(); });

  it('warns on the overview while two live deployments claim one VM, and hides the abandoned one', async () => {
    const first = await provision(t, alice);
    const second = await provision(t, alice, { central_vm_id: 'vm-central', vms: ['vm-central', 'vm-other'] });
    const overview = await page(t, '/', { cookie: alice.cookie });
    assert.match(overview.text, /Two deployments claim one VM/);
    assert.match(overview.text, new RegExp(`<code>vm-central</code>: <code>${[first.deploymentId, second.deploymentId].sort().join(' </code><code>')} </code>`));
    assert.ok(!overview.text.includes('vm-other</code>:'), 'a VM only one deployment claims is not listed');

    const status = await page(t, `/setup-sessions/${second.sessionId}`, { cookie: alice.cookie });
    assert.match(status.text, new RegExp(`action="/deployments/${second.deploymentId}/abandon"`));
    const csrf = formToken(status.text);
    const path = `/deployments/${second.deploymentId}/abandon`;
    assert.equal((await page(t, path, { cookie: alice.cookie, form: { [CSRF_FIELD]: csrf, reason: 'x' } })).status, 400, 'unconfirmed');
    assert.equal((await page(t, path, { cookie: alice.cookie, form: { confirm: 'abandon', reason: 'x' } })).status, 403, 'no CSRF token');
    assert.equal((await page(t, path, { cookie: alice.cookie, form: { [CSRF_FIELD]: csrf, confirm: 'abandon', reason: '  ' } })).status, 400, 'no reason');
    const carol = await t.signIn('carol');
    const carolCsrf = formToken((await page(t, '/', { cookie: carol.cookie })).text);
    assert.equal((await page(t, path, { cookie: carol.cookie, form: { [CSRF_FIELD]: carolCsrf, confirm: 'abandon', reason: 'mine now' } })).status, 404, 'another tenant');
    assert.equal(abandonedRecords(t).length, 0);

    const done = await page(t, path, { cookie: alice.cookie, form: { [CSRF_FIELD]: csrf, confirm: 'abandon', reason: 'the installer died; starting over' } });
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), `/setup-sessions/${second.sessionId}`);
    const [record] = abandonedRecords(t);
    assert.deepEqual(record!.data, { deploymentId: second.deploymentId, tenantId: 't-acme', principal: 't-acme/alice', via: 'browser', reason: 'the installer died; starting over', from: 'provisioning' });
    assert.equal(record!.actor?.id, 't-acme/alice');

    const after = await page(t, '/', { cookie: alice.cookie });
    assert.ok(!after.text.includes('Two deployments claim one VM'), 'an abandoned deployment claims nothing');
    assert.ok(!after.text.includes(second.deploymentId), 'hidden from the overview');
    assert.match(after.text, /href="\/\?abandoned=show">Show 1 abandoned/);
    const shown = await page(t, '/?abandoned=show', { cookie: alice.cookie });
    assert.ok(shown.text.includes(second.deploymentId), 'shown when asked');
    assert.match((await page(t, `/setup-sessions/${second.sessionId}`, { cookie: alice.cookie })).text, /Abandoned .* by <code>t-acme\/alice<\/code> \(browser\): the installer died; starting over/);
    const phase = await t.json(`/v1/setup-sessions/${second.sessionId}/phases`, { body: { phase: 'discovery_completed' }, bearer: second.sessionToken });
    assert.equal(phase.status, 409, 'its installer session accepts nothing more');
    assert.equal((await t.json(`/v1/setup-sessions/${second.sessionId}`, { browser: alice })).body.deployment.status, 'abandoned');
  });

  it('abandons from the installer with the session token, and from the JSON browser route; never a live deployment', async () => {
    const p = await provision(t, alice);
    const noToken = await t.json(`/v1/setup-sessions/${p.sessionId}/abandon`, { body: { reason: 'check failed' } });
    assert.equal(noToken.status, 401);
    const r = await t.json(`/v1/setup-sessions/${p.sessionId}/abandon`, { body: { reason: 'check failed' }, bearer: p.sessionToken });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { deployment_id: p.deploymentId, status: 'abandoned', previous_status: 'provisioning' });
    assert.equal((await t.json(`/v1/setup-sessions/${p.sessionId}/abandon`, { body: { reason: 'again' }, bearer: p.sessionToken })).status, 409);
    const last = abandonedRecords(t).at(-1)!;
    assert.deepEqual([last.data, last.actor?.authentication], [{ deploymentId: p.deploymentId, tenantId: 't-acme', principal: p.sessionId, via: 'installer', reason: 'check failed', from: 'provisioning' }, 'session-token']);

    const live = await provision(t, alice);
    assert.equal((await sendSnapshot(t, live.deploymentId, live.key)).status, 202);
    const refused = await t.json(`/v1/deployments/${live.deploymentId}/abandon`, { body: { reason: 'oops' }, browser: alice });
    assert.equal(refused.status, 409);
    assert.match(refused.body.error, /live/);
    const stuck = await provision(t, alice);
    const noCsrf = await t.json(`/v1/deployments/${stuck.deploymentId}/abandon`, { body: { reason: 'stuck' }, browser: alice, headers: { 'x-csrf-token': 'wrong' } });
    assert.equal(noCsrf.status, 403);
    const ok = await t.json(`/v1/deployments/${stuck.deploymentId}/abandon`, { body: { reason: 'stuck' }, browser: alice });
    assert.equal(ok.status, 200);
    assert.equal(ok.body.status, 'abandoned');
  });
});
