import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateToken, hashToken } from '../../src/auth/tokens.js';
import { importEnrollmentGrants } from '../../src/services/enrollment-grants.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

const spki = () => generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();

/** Writes a grants file as the installer does (0600, in a 0700 folder of the instance's directory); its path. */
function writeGrants(t: TestInstance, name: string, grants: object): string {
  const dir = join(t.dir, 'grants');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(grants), { mode: 0o600 });
  return path;
}

describe('enrollment grants from the setup authority', () => {
  it('lets each collector of the current epoch enroll once with the token the installer delivered', async () => {
    const t = await startTestInstance();
    try {
      const token = generateToken('lce_');
      const stale = generateToken('lce_');
      const path = writeGrants(t, 'enrollment-grants.json', {
        deployment_id: 'dep_x', enrollment_epoch: 2,
        collectors: [
          { collector_id: 'vm-web', vm_id: 'vm-web', token_sha256: hashToken(token), expires_at: '2026-11-23T00:00:00Z' },
          { collector_id: 'vm-old', vm_id: 'vm-old', token_sha256: hashToken(stale), expires_at: '2026-11-01T00:00:00Z' },
        ],
      });
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T10:00:00.000Z'), 1, 'the expired grant is not imported');
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T10:00:01.000Z'), 0, 'a second start imports nothing again');
      const enroll = (collectorId: string, enrollmentToken: string) => t.request('/api/v1/collector/enrollments', { method: 'POST', body: JSON.stringify({ collectorId, enrollmentToken, publicKey: spki() }) });
      assert.equal((await enroll('vm-other', token)).status >= 400, true, 'the token is bound to its collector');
      assert.equal((await enroll('vm-web', token)).status, 201);
      assert.ok((await enroll('vm-web', token)).status >= 400, 'single use');
      assert.ok((await enroll('vm-old', stale)).status >= 400);
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T10:00:02.000Z'), 0, 'a used grant is not re-imported');
      chmodSync(path, 0o644);
      await assert.rejects(importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T10:00:03.000Z'), /readable or writable by group or others/);
    } finally {
      await t.close();
    }
  });

  it('never redeems a used token again when grants of another deployment reuse its epoch and collector id, nor after its expiry', async () => {
    const t = await startTestInstance();
    try {
      const file = (name: string, deployment: string, token: string, expiresAt: string) =>
        writeGrants(t, name, { deployment_id: deployment, enrollment_epoch: 1, collectors: [{ collector_id: 'vm-web', vm_id: 'vm-web', token_sha256: hashToken(token), expires_at: expiresAt }] });
      const enroll = (enrollmentToken: string) => t.request('/api/v1/collector/enrollments', { method: 'POST', body: JSON.stringify({ collectorId: 'vm-web', enrollmentToken, publicKey: spki() }) });
      const first = generateToken('lce_');
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, file('a.json', 'dep_a', first, '2026-11-23T00:00:00Z'), '2026-11-22T10:00:00.000Z'), 1);
      assert.equal((await enroll(first)).status, 201);
      // A new install on the same VMs: another deployment, epoch 1 again, a new token for vm-web.
      const second = generateToken('lce_');
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, file('b.json', 'dep_b', second, '2026-11-23T12:00:00Z'), '2026-11-22T12:00:00.000Z'), 1);
      t.setNow('2026-11-23T06:00:00.000Z');
      assert.equal((await enroll(first)).status, 401, 'the used (and by now expired) first token stays dead');
      await t.restart();
      assert.equal((await enroll(first)).status, 401, 'also after a checkpoint restore');
      await t.inst.runtime.rebuild();
      assert.equal((await enroll(first)).status, 401, 'and after a replay from record 1');
      assert.equal((await enroll(second)).status, 201, 'the token of the new deployment enrolls');
      // An expiry written with an offset is an instant: 20:00+14:00 is 06:00Z, before now.
      const late = generateToken('lce_');
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, file('c.json', 'dep_c', late, '2026-11-23T20:00:00+14:00'), '2026-11-23T06:00:00.000Z'), 0);
      assert.equal((await enroll(late)).status, 401);
    } finally {
      await t.close();
    }
  });

  it('does not import a used grant again once its token is forgotten, even with the clock set back before its expiry', async () => {
    const t = await startTestInstance();
    try {
      const token = generateToken('lce_');
      const path = writeGrants(t, 'enrollment-grants.json', { deployment_id: 'dep_x', enrollment_epoch: 1, collectors: [{ collector_id: 'vm-web', vm_id: 'vm-web', token_sha256: hashToken(token), expires_at: '2026-11-23T00:00:00Z' }] });
      const enroll = () => t.request('/api/v1/collector/enrollments', { method: 'POST', body: JSON.stringify({ collectorId: 'vm-web', enrollmentToken: token, publicKey: spki() }) });
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T10:00:00.000Z'), 1);
      assert.equal((await enroll()).status, 201);
      // A day later another token is issued: the expired (used) grant token is forgotten then.
      t.setNow('2026-11-24T10:00:00.000Z');
      assert.equal((await t.request('/api/v1/collector/enrollment-tokens', { method: 'POST', token: t.tokens.admin, body: JSON.stringify({ collectorId: 'vm-db' }) })).status, 201);
      // The VM's clock is then set back before the grant's expiry (a snapshot restored, NTP wrong), and Vigil starts again.
      t.setNow('2026-11-22T11:00:00.000Z');
      await t.restart();
      const warnings: Array<Record<string, unknown>> = [];
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T11:00:00.000Z', (line) => warnings.push(line)), 0, 'the grant is not imported again');
      assert.deepEqual(warnings.map((w) => [w.level, w.collectorId, w.expiresAt, w.forgottenThrough]), [['warn', 'vm-web', '2026-11-23T00:00:00.000Z', '2026-11-24T10:00:00.000Z']], 'and the start says why');
      assert.equal((await enroll()).status, 401, 'its token does not enroll a second key');
      await t.inst.runtime.rebuild();
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T11:00:01.000Z'), 0, 'nor after a replay from record 1');
    } finally {
      await t.close();
    }
  });
});
