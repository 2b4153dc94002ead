import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import * as v from 'valibot';
import { generateToken, hashToken } from '../../src/auth/tokens.js';
import { generateKeyPair } from '../../src/kernel/ed25519.js';
import { collectorsProjection, type CollectorView } from '../../src/projections/collectors.js';
import type { EventLog } from '../../src/log/event-log.js';
import {
  COLLECTORS_BUDGET_CHARS, MAX_REPORTED_COLLECTORS, SNAPSHOT_SIGNING_DOMAIN, buildSnapshot, loadIdentityKey, readGrantsSeen,
  recentSystems, reportedCollectors, signPayload,
} from '../../src/services/deployment-reporter.js';
import { importEnrollmentGrants } from '../../src/services/enrollment-grants.js';
import { SNAPSHOT_DOMAIN, parseEd25519Spki, signedBytes, verifyStrict } from '../../src/setup/identity-key.js';
import { SignedEnvelope, SnapshotPayload } from '../../src/setup/schemas.js';
import { envelopeText, issueToken, makePayload, postEnrollment, submit, type TestKey } from '../collector/helpers.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

describe('deployment reporter', () => {
  it('signs what the authority verifies strictly, and nothing else', () => {
    assert.equal(SNAPSHOT_SIGNING_DOMAIN, SNAPSHOT_DOMAIN);
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const key = parseEd25519Spki(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    assert.ok(typeof key !== 'string');
    const body = signPayload(SNAPSHOT_SIGNING_DOMAIN, { deployment_id: 'dep_x', updated_at: '2026-11-22T10:00:00Z' }, privateKey);
    assert.equal(verifyStrict(body.signature, signedBytes(SNAPSHOT_DOMAIN, body.payload), key.raw), true);
    assert.equal(verifyStrict(body.signature, signedBytes(SNAPSHOT_DOMAIN, `${body.payload} `), key.raw), false);
    assert.equal(verifyStrict(body.signature, signedBytes('vigil-setup/possession-proof/v1', body.payload), key.raw), false, 'domains do not cross');
    assert.equal(verifyStrict(`${body.signature.slice(0, -2)}A=`, signedBytes(SNAPSHOT_DOMAIN, body.payload), key.raw), false, 'non-canonical base64 is refused');
  });

  it('refuses an identity key file that others can read', () => {
    const d = tempDir();
    mkdirSync(join(d.path, 's'), { mode: 0o700 });
    const path = join(d.path, 's', 'id.key');
    writeFileSync(path, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    assert.equal(loadIdentityKey(path).asymmetricKeyType, 'ed25519');
    chmodSync(path, 0o644);
    assert.throws(() => loadIdentityKey(path), /readable or writable by group or others/);
    d.cleanup();
  });

  it('refuses small-order and non-Ed25519 identity keys', () => {
    const smallOrder = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.alloc(32)]);
    smallOrder[12] = 1;
    const pem = `-----BEGIN PUBLIC KEY-----\n${smallOrder.toString('base64')}\n-----END PUBLIC KEY-----\n`;
    assert.match(String(parseEd25519Spki(pem)), /small-order/);
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    assert.match(String(parseEd25519Spki(x25519)), /Ed25519/);
  });
});

/** A fresh collector key, enrolled with `token` (the instance's `vce_` or a grant's `lce_`); the key. */
async function enrollWith(t: TestInstance, collectorId: string, token: string): Promise<TestKey> {
  const key = generateKeyPair();
  const res = await postEnrollment(t, collectorId, token, key.publicKey);
  assert.equal(res.status, 201, await res.text());
  return { seed: key.seed, publicKey: key.publicKey };
}

/** The snapshot the instance would send now, as the authority parses it. */
function snapshotOf(t: TestInstance, grants: ReturnType<typeof readGrantsSeen>, at: string) {
  const payload = buildSnapshot({
    authorityUrl: 'http://authority.test', deploymentId: 'dep_x', key: generateKeyPairSync('ed25519').privateKey, intervalMs: 60_000,
    instanceUrl: 'http://127.0.0.1:4173', centralVmId: 'vm-central', log: t.inst.log, collectors: () => t.inst.reads,
    ...(grants ? { grants } : {}), now: () => new Date(at), onLine: () => {},
  });
  const parsed = v.safeParse(SnapshotPayload, payload);
  assert.ok(parsed.success, JSON.stringify(parsed.issues?.map((i) => [v.getDotPath(i), i.message])));
  assert.ok(v.safeParse(SignedEnvelope, signPayload(SNAPSHOT_SIGNING_DOMAIN, payload, generateKeyPairSync('ed25519').privateKey)).success);
  return parsed.output;
}

describe('deployment snapshot: collectors', () => {
  it('reports each collector with the epoch of the grant it enrolled with, its VM, last evidence and silence', async () => {
    const t = await startTestInstance({ monitoring: { silence: { floorSeconds: 60, ceilingSeconds: 120 } } });
    try {
      const web = generateToken('lce_');
      const db = generateToken('lce_');
      mkdirSync(join(t.dir, 'grants'), { mode: 0o700 });
      const path = join(t.dir, 'grants', 'enrollment-grants.json');
      writeFileSync(path, JSON.stringify({
        deployment_id: 'dep_x', enrollment_epoch: 2,
        collectors: [
          { collector_id: 'web', vm_id: 'vm-web', token_sha256: hashToken(web), expires_at: '2026-11-23T00:00:00Z' },
          { collector_id: 'db', vm_id: 'vm-db', token_sha256: hashToken(db), expires_at: '2026-11-23T00:00:00Z' },
          { collector_id: 'idle', vm_id: 'vm-idle', token_sha256: hashToken(generateToken('lce_')), expires_at: '2026-11-23T00:00:00Z' },
        ],
      }), { mode: 0o600 });
      assert.equal(await importEnrollmentGrants(t.inst.pipeline, path, '2026-11-22T10:00:00.000Z'), 3);
      const grants = readGrantsSeen(path);
      assert.equal(grants?.epoch, 2);
      const webKey = await enrollWith(t, 'web', web);
      const dbKey = await enrollWith(t, 'db', db);
      await enrollWith(t, 'adhoc', await issueToken(t, 'adhoc'));
      assert.equal(snapshotOf(t, grants, '2026-11-22T10:00:00.000Z').systems_reporting_live, 1, 'enrolled collectors without evidence yet are not reporting');

      assert.equal((await submit(t, envelopeText(makePayload('web', 1), webKey))).status, 202);
      assert.equal((await submit(t, envelopeText(makePayload('db', 1), dbKey))).status, 202);
      // 30 minutes later: past the 15-minute live window of the log tail, and past db's silence threshold.
      t.setNow('2026-11-22T10:30:00.000Z');
      assert.equal((await submit(t, envelopeText(makePayload('db', 2), dbKey))).status, 202);
      t.setNow('2026-11-22T10:33:00.000Z');
      await t.monitor.check();
      // web reported at 10:00 and db at 10:30, both past the 120 s ceiling at 10:33: both declared silent; then web reports.
      assert.deepEqual(t.monitor.sources().silent.filter((s) => s.kind === 'collector').map((s) => s.source).sort(), ['collector:db', 'collector:web']);
      assert.equal((await submit(t, envelopeText(makePayload('web', 2), webKey))).status, 202);

      const snap = snapshotOf(t, grants, '2026-11-22T10:33:00.000Z');
      assert.equal(snap.enrollment_epoch, 2);
      const at = (id: string) => snap.collectors!.find((c) => c.collector_id === id);
      assert.deepEqual(snap.collectors!.map((c) => c.collector_id), ['db', 'web', 'adhoc'], 'the deployment\'s own collectors first, then by id');
      assert.deepEqual(at('web'), { collector_id: 'web', vm_id: 'vm-web', enrollment_epoch: 2, enrolled_at: '2026-11-22T10:00:00.000Z', last_evidence_at: '2026-11-22T10:33:00.000Z', silent: false }, 'reported since its silence');
      assert.deepEqual(at('db'), { collector_id: 'db', vm_id: 'vm-db', enrollment_epoch: 2, enrolled_at: '2026-11-22T10:00:00.000Z', last_evidence_at: '2026-11-22T10:30:00.000Z', silent: true });
      assert.deepEqual(at('adhoc'), { collector_id: 'adhoc', enrolled_at: '2026-11-22T10:00:00.000Z', last_evidence_at: null, silent: false }, 'a token made on the instance names no epoch');
      assert.equal(at('idle'), undefined, 'a grant never redeemed is no collector of the instance');
      const system = (id: string) => snap.systems!.find((s) => s.id === id);
      assert.equal(system('collector:web')?.live, true);
      assert.equal(system('collector:db')?.live, false, 'a silent collector is not reporting');
      assert.equal(system('collector:adhoc')?.live, false, 'nor one that never sent evidence');
      assert.equal(snap.systems_reporting_live, 2, 'the central instance and web');

      // Quiet but healthy: with a one-hour window, db reports again and then nothing for 20 minutes (past the
      // 15-minute live window of the log tail); the silence check at 10:54 finds it within its window.
      t.reloadMonitoring({ ...t.config.monitoring, silence: { ...t.config.monitoring.silence, ceilingSeconds: 3600 } });
      t.setNow('2026-11-22T10:34:00.000Z');
      assert.equal((await submit(t, envelopeText(makePayload('db', 3), dbKey))).status, 202);
      t.setNow('2026-11-22T10:54:00.000Z');
      await t.monitor.check();
      assert.deepEqual(t.monitor.sources().silent, [], 'nothing silent by the instance\'s own rules');
      assert.equal(recentSystems(t.inst.log, new Date('2026-11-22T10:54:00.000Z')).length, 0, 'nothing in the live window');
      const quiet = snapshotOf(t, grants, '2026-11-22T10:54:00.000Z');
      assert.equal(quiet.systems!.find((s) => s.id === 'collector:db')?.live, true, 'quiet within its silence window: reporting');
      assert.equal(quiet.systems_reporting_live, 3);
    } finally {
      await t.close();
    }
  });

  it('keeps at most 1,000 collectors and 120,000 characters of them, the deployment\'s own first, counting the rest', () => {
    const view = (id: string, tokenId: string): CollectorView => ({ collectorId: id, epoch: 1, publicKey: '', keyFingerprint: '', usedFingerprints: [], enrolledAt: '2026-11-22T10:00:00.000Z', tokenId, lastSequence: 0, lastDigest: null, lastResult: null, lastAcceptedAt: null, accepted: 0, rejected: 0, lastRejection: null });
    const source = (views: CollectorView[]) => ({ collectors: { ...collectorsProjection.initial(), collectors: new Map(views.map((c) => [c.collectorId, c])) }, monitoring: { sources: new Map(), disk: { level: 'ok' as const } } });
    const ids = (n: number, width = 0) => Array.from({ length: n }, (_, i) => `c${'x'.repeat(width)}${String(i).padStart(4, '0')}`);

    const plain = reportedCollectors(source(ids(1200).map((id, i) => view(id, `t${i}`))), undefined);
    assert.equal(plain.collectors.length, MAX_REPORTED_COLLECTORS);
    assert.equal(plain.omitted, 200);

    // Half of 1,500 from this deployment's grants: all 750 come first; the characters bound cuts the rest.
    const mixed = ids(1500).map((id, i) => view(id, i % 2 ? `grant-e3-${id}-0123456789abcdef` : `t${i}`));
    const grants = { epoch: 3, vmIds: new Map(mixed.filter((_, i) => i % 2).map((c) => [c.collectorId, `vm-${c.collectorId}`])) };
    const some = reportedCollectors(source(mixed), grants);
    assert.ok(some.collectors.length < MAX_REPORTED_COLLECTORS, `${some.collectors.length} kept`);
    assert.equal(some.collectors.length + some.omitted, 1500);
    assert.ok(some.collectors.slice(0, 750).every((c) => c.vm_id === `vm-${c.collector_id}` && c.enrollment_epoch === 3));
    assert.ok(JSON.stringify(some.collectors).length <= COLLECTORS_BUDGET_CHARS);

    // A full scope (256 VMs) of the longest ids is always listed whole, and the signed snapshot fits the authority's bounds.
    const longest = ids(256, 123).map((id) => view(id, `grant-e1-${id}-0123456789abcdef`));
    const scope = { epoch: 1, vmIds: new Map(longest.map((c) => [c.collectorId, `v${c.collectorId.slice(1)}`])) };
    const noLog = { head: () => ({ seq: 0 }), read: () => [] } as unknown as EventLog;
    const payload = buildSnapshot({ authorityUrl: 'http://a.test', deploymentId: 'dep_x', key: generateKeyPairSync('ed25519').privateKey, intervalMs: 60_000, instanceUrl: 'http://127.0.0.1:4173', log: noLog, collectors: () => source(longest), grants: scope, now: () => new Date('2026-11-22T10:00:00Z'), onLine: () => {} });
    const parsed = v.parse(SnapshotPayload, payload);
    assert.equal(parsed.collectors!.length, 256);
    assert.equal(parsed.collectors_omitted, undefined);
    const body = JSON.stringify(signPayload(SNAPSHOT_SIGNING_DOMAIN, payload, generateKeyPairSync('ed25519').privateKey));
    assert.ok(v.safeParse(SignedEnvelope, JSON.parse(body)).success);
    assert.ok(Buffer.byteLength(body) <= 256 * 1024, `${Buffer.byteLength(body)} bytes: over the authority's default body bound`);
  });
});
