import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proofMessage } from '../../src/setup/identity-key.js';
import { newKey, provision, SCOPE, sendSnapshot, startTestAuthority, type TestAuthority } from './harness.js';

describe('setup protocol', () => {
  let t: TestAuthority;
  before(async () => { t = await startTestAuthority(); });
  after(async () => { await t.close(); });

  it('runs create, connect, claim, prove, bootstrap key, phases and completion after the first snapshot', async () => {
    const alice = await t.signIn('alice');
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    assert.equal(created.status, 201);
    assert.match(created.body.setup_token, /^lst_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.expires_at, '2026-11-22T10:15:00.000Z');
    const connected = await t.json('/v1/setup-sessions/connect', { body: { setup_token: created.body.setup_token } });
    assert.equal(connected.status, 200);
    assert.equal(connected.body.status, 'connected');
    assert.ok(!JSON.stringify(connected.body).includes(created.body.setup_token), 'the token is not reflected');
    assert.equal(connected.body.provisioning, undefined);
    const key = newKey();
    const claim = await t.json('/v1/setup-sessions/claim', { body: { setup_token: created.body.setup_token, deployment_identity: { public_key_spki_pem: key.pem }, installation_scope: SCOPE } });
    assert.equal(claim.status, 201);
    assert.deepEqual(claim.body.installation_scope, { central_vm_id: 'vm-central', vms: ['vm-central', 'vm-db', 'vm-web'] });
    assert.match(claim.body.session_token, /^lss_/);
    const id = created.body.session_id;
    const status = await t.json(`/v1/setup-sessions/${id}`, { browser: alice });
    assert.equal(status.body.status, 'claimed');
    assert.equal(status.body.deployment.status, 'provisioning');
    assert.equal(status.body.deployment.systems_reporting_live, 0);
    const proof = key.sign(proofMessage(id, claim.body.deployment_id, claim.body.challenge));
    const proven = await t.json(`/v1/setup-sessions/${id}/prove`, { body: { signature: proof }, bearer: claim.body.session_token });
    assert.equal(proven.status, 200);
    assert.deepEqual(proven.body.provisioning.collectors.map((c: { vm_id: string }) => c.vm_id), ['vm-db', 'vm-web']);
    assert.match(proven.body.provisioning.collectors[0].enrollment_token, /^lce_/);
    assert.match(proven.body.provisioning.central.console_credential.token, /^vgl_/);
    const fleet = await t.json(`/v1/setup-sessions/${id}/bootstrap-key`, { body: { public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fleet' }, bearer: claim.body.session_token });
    assert.equal(fleet.status, 200);
    assert.match(fleet.body.fingerprint, /^SHA256:/);
    for (const phase of ['discovery_completed', 'central_install_started', 'awaiting_first_snapshot']) {
      assert.equal((await t.json(`/v1/setup-sessions/${id}/phases`, { body: { phase }, bearer: claim.body.session_token })).status, 200);
    }
    const early = await t.json(`/v1/setup-sessions/${id}/phases`, { body: { phase: 'completed' }, bearer: claim.body.session_token });
    assert.equal(early.status, 409);
    assert.match(early.body.error, /first deployment snapshot/);
    assert.equal((await sendSnapshot(t, claim.body.deployment_id, key)).status, 202);
    const done = await t.json(`/v1/setup-sessions/${id}/phases`, { body: { phase: 'completed' }, bearer: claim.body.session_token });
    assert.equal(done.status, 200);
    const final = await t.json(`/v1/setup-sessions/${id}`, { browser: alice });
    assert.equal(final.body.status, 'completed');
    assert.equal(final.body.dashboard_url, 'http://vm-central:4173/', 'the console at / of the reported instance URL');
    assert.equal(final.body.deployment.status, 'reporting');
    assert.equal(final.body.deployment.systems_reporting_live, 3);
    assert.equal(final.body.bootstrap_key.fingerprint, fleet.body.fingerprint);
    assert.deepEqual(final.body.phases.map((p: { phase: string }) => p.phase), ['discovery_completed', 'central_install_started', 'awaiting_first_snapshot', 'completed']);
  });

  it('lets exactly one of 50 concurrent claims consume the setup token', async () => {
    const alice = await t.signIn('alice');
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    await t.json('/v1/setup-sessions/connect', { body: { setup_token: created.body.setup_token } });
    const claims = await Promise.all(Array.from({ length: 50 }, () => t.json('/v1/setup-sessions/claim', {
      body: { setup_token: created.body.setup_token, deployment_identity: { public_key_spki_pem: newKey().pem }, installation_scope: SCOPE },
    })));
    assert.equal(claims.filter((c) => c.status === 201).length, 1);
    assert.deepEqual(new Set(claims.filter((c) => c.status !== 201).map((c) => c.status)), new Set([401]));
  });

  it('refuses an expired token and a reused token', async () => {
    const alice = await t.signIn('alice');
    const stale = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    const fresh = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    await t.json('/v1/setup-sessions/connect', { body: { setup_token: fresh.body.setup_token } });
    const ok = await t.json('/v1/setup-sessions/claim', { body: { setup_token: fresh.body.setup_token, deployment_identity: { public_key_spki_pem: newKey().pem }, installation_scope: SCOPE } });
    assert.equal(ok.status, 201);
    const reused = await t.json('/v1/setup-sessions/claim', { body: { setup_token: fresh.body.setup_token, deployment_identity: { public_key_spki_pem: newKey().pem }, installation_scope: SCOPE } });
    assert.equal(reused.status, 401);
    assert.equal((await t.json('/v1/setup-sessions/connect', { body: { setup_token: fresh.body.setup_token } })).status, 401);
    t.advance(15 * 60 + 1);
    assert.equal((await t.json('/v1/setup-sessions/connect', { body: { setup_token: stale.body.setup_token } })).status, 401);
  });

  it('requires connect before claim', async () => {
    const alice = await t.signIn('alice');
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    const claim = await t.json('/v1/setup-sessions/claim', { body: { setup_token: created.body.setup_token, deployment_identity: { public_key_spki_pem: newKey().pem }, installation_scope: SCOPE } });
    assert.equal(claim.status, 409);
  });

  it('rejects duplicate, over-long and central-less scopes and non-Ed25519 keys with 400', async () => {
    const alice = await t.signIn('alice');
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    const claim = (scope: unknown, pem = newKey().pem) => t.json('/v1/setup-sessions/claim', { body: { setup_token: created.body.setup_token, deployment_identity: { public_key_spki_pem: pem }, installation_scope: scope } });
    const dup = await claim({ central_vm_id: 'a', vms: ['a', 'b', 'B'] });
    assert.equal(dup.status, 400);
    assert.ok(dup.body.issues.some((i: string) => /unique/.test(i)));
    assert.equal((await claim({ central_vm_id: 'a', vms: Array.from({ length: 257 }, (_, i) => (i === 0 ? 'a' : `vm-${i}`)) })).status, 400);
    assert.equal((await claim({ central_vm_id: 'z', vms: ['a'] })).status, 400);
    assert.equal((await claim({ central_vm_id: '../etc', vms: ['../etc'] })).status, 400);
    const rsa = (await import('node:crypto')).generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const bad = await claim(SCOPE, rsa);
    assert.equal(bad.status, 400);
    assert.match(bad.body.issues[0], /Ed25519/);
  });

  it('refuses a proof signed by another key, a proof for another session, and a second proof', async () => {
    const alice = await t.signIn('alice');
    const p = await provision(t, alice);
    assert.equal(p.proven.status, 200);
    const again = await t.json(`/v1/setup-sessions/${p.sessionId}/prove`, { body: { signature: p.key.sign(proofMessage(p.sessionId, p.deploymentId, p.claim.body.challenge)) }, bearer: p.sessionToken });
    assert.equal(again.status, 409);
    const created = await t.json('/v1/setup-sessions', { body: {}, browser: alice });
    await t.json('/v1/setup-sessions/connect', { body: { setup_token: created.body.setup_token } });
    const key = newKey();
    const claim = await t.json('/v1/setup-sessions/claim', { body: { setup_token: created.body.setup_token, deployment_identity: { public_key_spki_pem: key.pem }, installation_scope: SCOPE } });
    const sid = created.body.session_id;
    const wrongKey = await t.json(`/v1/setup-sessions/${sid}/prove`, { body: { signature: newKey().sign(proofMessage(sid, claim.body.deployment_id, claim.body.challenge)) }, bearer: claim.body.session_token });
    assert.equal(wrongKey.status, 401);
    const wrongMessage = await t.json(`/v1/setup-sessions/${sid}/prove`, { body: { signature: key.sign(proofMessage(p.sessionId, claim.body.deployment_id, claim.body.challenge)) }, bearer: claim.body.session_token });
    assert.equal(wrongMessage.status, 401);
    const otherToken = await t.json(`/v1/setup-sessions/${sid}/prove`, { body: { signature: key.sign(proofMessage(sid, claim.body.deployment_id, claim.body.challenge)) }, bearer: p.sessionToken });
    assert.equal(otherToken.status, 401);
    const phaseEarly = await t.json(`/v1/setup-sessions/${sid}/phases`, { body: { phase: 'discovery_completed' }, bearer: claim.body.session_token });
    assert.equal(phaseEarly.status, 409);
  });

  it('keeps phases monotonic: a repeat is idempotent, a step back and an unknown phase are refused', async () => {
    const p = await provision(t, await t.signIn('alice'));
    const phase = (name: string) => t.json(`/v1/setup-sessions/${p.sessionId}/phases`, { body: { phase: name }, bearer: p.sessionToken });
    assert.equal((await phase('central_instance_configured')).body.recorded, true);
    const repeat = await phase('central_instance_configured');
    assert.equal(repeat.status, 200);
    assert.equal(repeat.body.recorded, false);
    const back = await phase('discovery_completed');
    assert.equal(back.status, 409);
    assert.equal(back.body.current_phase, 'central_instance_configured');
    assert.equal((await phase('teleported')).status, 400);
  });

  it('accepts snapshots only signed by the deployment key, moving forward in time', async () => {
    const p = await provision(t, await t.signIn('alice'));
    assert.equal((await sendSnapshot(t, p.deploymentId, newKey())).status, 401);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 202);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 409, 'a replayed updated_at is refused');
    const ahead = new Date(t.now().getTime() + 10 * 60_000).toISOString();
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { updated_at: ahead })).status, 400);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key, { deployment_id: 'dep_other' })).status, 400);
  });
});
