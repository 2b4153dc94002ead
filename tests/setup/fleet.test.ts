import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proofMessage } from '../../src/setup/identity-key.js';
import { fleetOf } from '../../src/setup/projections/fleet.js';
import type { DeploymentView } from '../../src/setup/projections/deployments.js';
import { relativeTime } from '../../src/setup/pages/fleet-table.js';
import { newKey, provision, sendSnapshot, startTestAuthority, type Browser, type TestAuthority } from './harness.js';

/** A collector entry as `vigil serve` reports it. */
const entry = (collectorId: string, epoch: number | undefined, over: Record<string, unknown> = {}) => ({
  collector_id: collectorId, vm_id: collectorId, ...(epoch !== undefined ? { enrollment_epoch: epoch } : {}),
  enrolled_at: '2026-11-22T10:00:05.000Z', last_evidence_at: '2026-11-22T10:00:30.000Z', silent: false, ...over,
});

/** The page a signed-in browser gets (the live fragment: the same component the page embeds). */
async function live(t: TestAuthority, b: Browser, sessionId: string): Promise<string> {
  const res = await t.app.request(`http://authority.test/setup-sessions/${sessionId}/live`, { headers: { cookie: b.cookie, host: 'authority.test' } });
  assert.equal(res.status, 200);
  return res.text();
}

/** The fleet table's row of a VM, as text without tags. */
function row(html: string, vm: string): string {
  const m = new RegExp(`<tr data-key="(?:collector|central):${vm}:[^"]*">(.*?)</tr>`, 's').exec(html);
  assert.ok(m, `a fleet row for ${vm}`);
  return m[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
}

describe('the dashboard sees the whole fleet', () => {
  let t: TestAuthority;
  let alice: Browser;
  before(async () => {
    t = await startTestAuthority();
    alice = await t.signIn('alice');
  });
  after(async () => { await t.close(); });

  it('accepts an old snapshot without collectors and shows every VM in scope as not enrolled yet, not reported', async () => {
    const p = await provision(t, alice);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 202);
    const html = await live(t, alice, p.sessionId);
    assert.match(row(html, 'vm-web'), /not yet in epoch 1.*not reported.*not reported/);
    assert.match(row(html, 'vm-db'), /not yet in epoch 1/);
    assert.match(row(html, 'vm-central'), /central instance/);
    const json = await t.json(`/v1/setup-sessions/${p.sessionId}`, { browser: alice });
    assert.deepEqual(json.body.deployment.collectors.map((c: { vm_id: string; enrolled: boolean }) => [c.vm_id, c.enrolled]), [['vm-db', false], ['vm-web', false]], 'in the order of the normalized scope');
    assert.deepEqual(json.body.deployment.collectors_waiting, ['vm-db', 'vm-web']);
  });

  it('shows per VM: enrolled in the current epoch, last evidence and silent, from the last signed snapshot', async () => {
    const p = await provision(t, alice);
    t.advance(60);
    const collectors = [entry('vm-web', 1), entry('vm-db', 1, { silent: true, last_evidence_at: '2026-11-22T09:00:00.000Z' })];
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { collectors, enrollment_epoch: 1 })).status, 202);
    const html = await live(t, alice, p.sessionId);
    assert.match(row(html, 'vm-web'), /yes, epoch 1 · 2026-11-22 10:00:05Z \(just now\) 2026-11-22 10:00:30Z \(just now\) no$/);
    assert.match(row(html, 'vm-db'), /yes, epoch 1 .* 2026-11-22 09:00:00Z \(1 h ago\) silent$/);
    assert.ok(!html.includes('id="reenrollment"'), 'no re-enrollment panel before any recovery');
    const json = await t.json(`/v1/setup-sessions/${p.sessionId}`, { browser: alice });
    const web = json.body.deployment.collectors.find((c: { vm_id: string }) => c.vm_id === 'vm-web');
    assert.deepEqual(web, { collector_id: 'vm-web', vm_id: 'vm-web', in_scope: true, epoch: 1, enrolled: true, enrolled_at: '2026-11-22T10:00:05.000Z', last_evidence_at: '2026-11-22T10:00:30.000Z', silent: false });
    assert.deepEqual(json.body.deployment.collectors_waiting, []);

    t.advance(60);
    const outside = entry('laptop-7', undefined, { vm_id: undefined, last_evidence_at: null });
    delete (outside as { vm_id?: string }).vm_id;
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { collectors: [...collectors, outside], collectors_omitted: 4 })).status, 202);
    const more = await live(t, alice, p.sessionId);
    assert.match(row(more, 'laptop-7'), /not in the approved scope.*none yet no$/);
    assert.match(more, /left out 4 further collectors/);
  });

  it('refuses a snapshot whose collectors break the schema, keeping the last good one', async () => {
    const p = await provision(t, alice);
    for (const bad of [
      [entry('vm-web', 0)],
      [entry('vm web', 1)],
      [{ ...entry('vm-web', 1), silent: 'no' }],
      [{ ...entry('vm-web', 1), extra: 1 }],
      Array.from({ length: 1001 }, (_, i) => entry(`c${i}`, 1)),
    ]) {
      t.advance(1);
      assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { collectors: bad })).status, 400);
    }
    assert.equal(t.store.pipeline.models.deployments.byId[p.deploymentId]!.snapshot, undefined);
  });

  it('makes visible after a recovery which collectors re-enrolled in the new epoch and which have not yet', async () => {
    const p = await provision(t, alice);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { collectors: [entry('vm-web', 1), entry('vm-db', 1)] })).status, 202);
    t.advance(1000);
    assert.ok((await t.monitor.tick()).marked.includes(p.deploymentId));
    const token = (await t.json(`/v1/deployments/${p.deploymentId}/recovery-token/reveal`, { body: {}, browser: alice })).body.recovery_token;
    const identity = newKey();
    const claim = await t.json('/v1/recovery/claim', { body: { recovery_token: token, deployment_identity: { public_key_spki_pem: identity.pem } } });
    assert.equal(claim.status, 201);
    const sid: string = claim.body.session_id;
    const proof = identity.sign(proofMessage(sid, p.deploymentId, claim.body.challenge));
    assert.equal((await t.json(`/v1/setup-sessions/${sid}/prove`, { body: { signature: proof }, bearer: claim.body.session_token })).status, 200);

    // The old central's last snapshot still stands: both collectors enrolled in epoch 1, none in epoch 2.
    let html = await live(t, alice, p.sessionId);
    assert.match(html, /0 of 2 collectors enrolled again in epoch 2; still to enroll: <code>vm-db<\/code>, <code>vm-web<\/code>/);
    assert.match(row(html, 'vm-web'), /not yet in epoch 2 \(last enrolled in epoch 1\)/);
    assert.match(row(html, 'vm-central'), /silent$/, 'the old central is gone until the reinstalled one reports');

    // The reinstalled central reports: vm-web enrolled with its new-epoch grant, vm-db still with its old one.
    t.advance(5);
    const later = t.now().toISOString();
    const web2 = entry('vm-web', 2, { enrolled_at: later, last_evidence_at: null });
    assert.equal((await sendSnapshot(t, p.deploymentId, identity, { collectors: [web2, entry('vm-db', 1)], enrollment_epoch: 2 })).status, 202);
    html = await live(t, alice, sid);
    assert.match(html, /1 of 2 collectors enrolled again in epoch 2; still to enroll: <code>vm-db<\/code>/);
    assert.match(row(html, 'vm-web'), /yes, epoch 2/);
    assert.match(row(html, 'vm-db'), /not yet in epoch 2 \(last enrolled in epoch 1\)/);

    // vm-db enrolls with a token made on the instance (no grant): after the epoch began, so it counts.
    t.advance(5);
    const db2 = entry('vm-db', undefined, { enrolled_at: t.now().toISOString() });
    assert.equal((await sendSnapshot(t, p.deploymentId, identity, { collectors: [web2, db2] })).status, 202);
    html = await live(t, alice, p.sessionId);
    assert.match(html, /Every collector in scope \(2\) enrolled again in epoch 2\./);
    const json = await t.json(`/v1/setup-sessions/${sid}`, { browser: alice });
    assert.deepEqual(json.body.deployment.collectors.map((c: { vm_id: string; enrolled: boolean; epoch: number }) => [c.vm_id, c.enrolled, c.epoch]), [['vm-db', true, 2], ['vm-web', true, 2]]);
    assert.match(row(html, 'vm-central'), /no$/, 'the reinstalled central reports');

    // An instance-made token from before the epoch began does not count.
    t.advance(5);
    const before = entry('vm-db', undefined, { enrolled_at: '2026-11-22T10:00:00.000Z' });
    assert.equal((await sendSnapshot(t, p.deploymentId, identity, { collectors: [web2, before] })).status, 202);
    assert.match(row(await live(t, alice, sid), 'vm-db'), /not yet in epoch 2 \(last enrolled in epoch unknown\)/);
  });

  it('rebuilds the same deployments read model from the log', async () => {
    const live = JSON.stringify(t.store.runtime.state('deployments'));
    await t.store.runtime.rebuild();
    assert.equal(JSON.stringify(t.store.runtime.state('deployments')), live);
  });
});

describe('fleet query and relative times', () => {
  const d = (over: Partial<DeploymentView>): DeploymentView => ({
    id: 'dep_1', tenantId: 't', userId: 'u', firstSessionId: 's', sessionId: 's', status: 'reporting', statusHistory: [],
    publicKeySpkiPem: '', keyFingerprint: '', retiredKeys: [], scope: { central_vm_id: 'c', vms: ['c', 'a', 'b'] }, epoch: 1,
    enrollments: {}, recoveryIds: [], ...over,
  });

  it('ties a VM to the collector its grant names, else the one the snapshot ties to it, else its own id', () => {
    const view = d({
      enrollments: { 'col-a': { collectorId: 'col-a', vmId: 'a', epoch: 1, tokenHash: '', expiresAt: '' } },
      snapshot: { collectors: [entry('col-a', 1, { vm_id: 'a' }), entry('col-b', 1, { vm_id: 'b' }), entry('a', 1, { vm_id: 'elsewhere' })] },
      lastHeartbeatAt: '2026-11-22T10:01:00.000Z',
    });
    const f = fleetOf(view);
    assert.deepEqual(f.rows.map((r) => [r.vmId, r.collectorId ?? null, r.inScope]), [['c', null, true], ['a', 'col-a', true], ['b', 'col-b', true], ['elsewhere', 'a', false]]);
    assert.equal(f.enrolled, 2, 'a collector outside the scope is not counted');
    assert.equal(f.asOf, '2026-11-22T10:01:00.000Z');
  });

  it('counts the authority\'s own redemption of the current epoch as enrolled', () => {
    const f = fleetOf(d({ enrollments: { a: { collectorId: 'a', vmId: 'a', epoch: 1, tokenHash: '', expiresAt: '', redeemed: { at: '2026-11-22T10:00:00.000Z', keyFingerprint: 'f' } } } }));
    assert.equal(f.rows.find((r) => r.vmId === 'a')?.enrolledAt, '2026-11-22T10:00:00.000Z');
    assert.deepEqual(f.waiting, ['b']);
  });

  it('says how long ago, in the largest whole unit', () => {
    const now = '2026-11-22T10:00:00.000Z';
    assert.equal(relativeTime('2026-11-22T09:59:30.000Z', now), 'just now');
    assert.equal(relativeTime('2026-11-22T09:55:00.000Z', now), '5 min ago');
    assert.equal(relativeTime('2026-11-22T07:00:00.000Z', now), '3 h ago');
    assert.equal(relativeTime('2026-11-19T10:00:00.000Z', now), '3 d ago');
    assert.equal(relativeTime('2026-11-22T10:05:00.000Z', now), 'ahead of this clock');
    assert.equal(relativeTime('not a time', now), '');
  });
});
