import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/auth/tokens.js';
import { ENROLLMENT_DOMAIN, proofMessage, signedBytes } from '../../src/setup/identity-key.js';
import { createSmtpMailer } from '../../src/setup/mailer.js';
import { decryptToken, recoveryAad } from '../../src/setup/recovery-crypto.js';
import { newKey, provision, SCOPE, sendSnapshot, startTestAuthority, type TestAuthority, type TestKey } from './harness.js';
import { startSmtpServer } from './smtp.js';

function redeem(t: TestAuthority, deploymentId: string, key: TestKey, collectorId: string, token: string) {
  const payload = JSON.stringify({ deployment_id: deploymentId, collector_id: collectorId, enrollment_token: token, collector_public_key_spki_pem: newKey().pem });
  return t.json(`/v1/deployments/${deploymentId}/enrollments`, { body: { payload, signature: key.sign(signedBytes(ENROLLMENT_DOMAIN, payload)) } });
}

describe('recovery monitor and recovery claim', () => {
  let t: TestAuthority;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  before(async () => {
    smtp = await startSmtpServer();
    const email = { from: 'vigil@authority.test', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, requireTLS: false } };
    t = await startTestAuthority({ email }, createSmtpMailer(email));
  });
  after(async () => { await t.close(); await smtp.close(); });

  it('marks a silent deployment central_missing, issues one encrypted token, e-mails, and recovers it', async () => {
    const alice = await t.signIn('alice');
    const p = await provision(t, alice);
    const oldTokens = p.proven.body.provisioning.collectors as Array<{ collector_id: string; enrollment_token: string }>;
    assert.equal((await redeem(t, p.deploymentId, p.key, 'vm-web', oldTokens.find((c) => c.collector_id === 'vm-web')!.enrollment_token)).status, 201);
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 202);
    t.advance(900);
    assert.deepEqual((await t.monitor.tick()).marked, [], 'not overdue at exactly the timeout');
    t.advance(2);
    const first = await t.monitor.tick();
    assert.deepEqual(first.marked, [p.deploymentId]);
    assert.equal(first.notices, 1);
    await t.monitor.tick();
    t.advance(3600);
    await t.monitor.tick();
    const issued = [...t.store.log.read(1)].filter((r) => r.type === 'RecoveryTokenIssued');
    assert.equal(issued.length, 1, 'exactly one recovery token');

    const status = await t.json(`/v1/setup-sessions/${p.sessionId}`, { browser: alice });
    assert.equal(status.body.deployment.status, 'central_missing');
    assert.equal(status.body.deployment.recovery.action.kind, 'reveal_recovery_token');
    assert.equal(status.body.deployment.recovery.email.to, 'alice@example.test');
    assert.equal(smtp.messages.length, 1);
    assert.deepEqual(smtp.messages[0]!.to, ['alice@example.test']);
    assert.match(smtp.messages[0]!.raw, new RegExp(p.deploymentId));

    assert.equal((await t.json(`/v1/deployments/${p.deploymentId}/recovery-token/reveal`, { body: {}, browser: await t.signIn('carol') })).status, 404);
    const revealed = await t.json(`/v1/deployments/${p.deploymentId}/recovery-token/reveal`, { body: {}, browser: alice });
    const token: string = revealed.body.recovery_token;
    assert.match(token, /^lrc_[A-Za-z0-9_-]{43}$/);
    assert.ok(!smtp.messages[0]!.raw.includes(token), 'the e-mail does not carry the token');

    const data = (issued[0]!.data as { ciphertext: string; recoveryId: string; tokenHash: string });
    assert.equal(decryptToken(t.key, data.ciphertext, recoveryAad(p.deploymentId, data.recoveryId)), token);
    assert.equal(data.tokenHash, hashToken(token));
    for (const f of readdirSync(join(t.dir, 'store'))) {
      assert.ok(!readFileSync(join(t.dir, 'store', f)).includes(Buffer.from(token)), `${f} holds the token in clear`);
    }
    assert.ok(readFileSync(join(t.dir, 'store', 'data.mdb')).includes(Buffer.from(data.ciphertext)), 'the ciphertext is what is on disk');

    const newIdentity = newKey();
    const wider = await t.json('/v1/recovery/claim', { body: { recovery_token: token, deployment_identity: { public_key_spki_pem: newIdentity.pem }, installation_scope: { central_vm_id: 'vm-central', vms: [...SCOPE.vms, 'vm-new'] } } });
    assert.equal(wider.status, 403);
    const claim = await t.json('/v1/recovery/claim', { body: { recovery_token: token, deployment_identity: { public_key_spki_pem: newIdentity.pem } } });
    assert.equal(claim.status, 201);
    assert.equal(claim.body.deployment_id, p.deploymentId);
    assert.deepEqual(claim.body.installation_scope, p.claim.body.installation_scope);
    assert.equal(claim.body.enrollment_epoch, 2);
    assert.equal((await t.json('/v1/recovery/claim', { body: { recovery_token: token, deployment_identity: { public_key_spki_pem: newKey().pem } } })).status, 401, 'single use');
    const after1 = await t.json(`/v1/setup-sessions/${p.sessionId}`, { browser: alice });
    assert.equal(after1.body.deployment.status, 'recovered');

    const sid = claim.body.session_id;
    const proven = await t.json(`/v1/setup-sessions/${sid}/prove`, { body: { signature: newIdentity.sign(proofMessage(sid, p.deploymentId, claim.body.challenge)) }, bearer: claim.body.session_token });
    assert.equal(proven.status, 200);
    assert.equal(proven.body.provisioning.enrollment_epoch, 2);
    const oldConsole = p.proven.body.provisioning.central.console_credential;
    const newConsole = proven.body.provisioning.central.console_credential;
    assert.notEqual(newConsole.id, oldConsole.id);
    assert.notEqual(newConsole.token, oldConsole.token);
    assert.equal(newConsole.generation, 2);

    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 401, 'the retired identity key is refused');
    const oldWeb = oldTokens.find((c) => c.collector_id === 'vm-web')!.enrollment_token;
    const oldDb = oldTokens.find((c) => c.collector_id === 'vm-db')!.enrollment_token;
    assert.equal((await redeem(t, p.deploymentId, newIdentity, 'vm-web', oldWeb)).status, 401, 'old enrollment refused');
    assert.equal((await redeem(t, p.deploymentId, newIdentity, 'vm-db', oldDb)).status, 401, 'unused old-epoch token refused');
    const fresh = (proven.body.provisioning.collectors as Array<{ collector_id: string; enrollment_token: string }>).find((c) => c.collector_id === 'vm-web')!;
    assert.equal((await redeem(t, p.deploymentId, newIdentity, 'vm-web', fresh.enrollment_token)).status, 201);
    assert.equal((await redeem(t, p.deploymentId, newIdentity, 'vm-web', fresh.enrollment_token)).status, 401, 'single use');

    const completeEarly = await t.json(`/v1/setup-sessions/${sid}/phases`, { body: { phase: 'completed' }, bearer: claim.body.session_token });
    assert.equal(completeEarly.status, 409, 'a recovery completes only after the reinstalled central reports');
    assert.equal((await sendSnapshot(t, p.deploymentId, newIdentity)).status, 202);
    assert.equal((await t.json(`/v1/setup-sessions/${sid}/phases`, { body: { phase: 'completed' }, bearer: claim.body.session_token })).status, 200);
    const refused = [...t.store.log.read(1)].filter((r) => r.type === 'CollectorEnrollmentRefused');
    assert.equal(refused.length, 3);
  });

  it('rebuilds the same read models from the log', async () => {
    const live = JSON.stringify(['setup-sessions', 'deployments', 'recovery'].map((n) => t.store.runtime.state(n)));
    await t.store.runtime.rebuild();
    assert.equal(JSON.stringify(['setup-sessions', 'deployments', 'recovery'].map((n) => t.store.runtime.state(n))), live);
  });
});
