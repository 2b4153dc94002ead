import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashToken } from '../../src/auth/tokens.js';
import { decideRedeem, enrollmentValid, type RedeemCommand } from '../../src/setup/commands/redeem-enrollment.js';
import { event } from '../../src/setup/events.js';
import { ENROLLMENT_DOMAIN, signedBytes } from '../../src/setup/identity-key.js';
import { AUTHORITY, spec, type Given } from '../helpers/decider-spec.js';
import { centralMissing, grant, identity, provisioned, recoveryClaimed, sessionProven, snapshotReceived, type Identity } from '../helpers/setup-fixtures.js';

const id = identity();
const NOW = '2026-11-22T10:30:00.000Z';
const redeem = spec(decideRedeem, AUTHORITY);

/** A redemption of `collectorId`'s token `enroll-<vm>` relayed by the central instance signing as `signer`. */
function cmd(signer: Identity, collectorId: string, over: Partial<RedeemCommand> = {}): RedeemCommand {
  const payloadText = JSON.stringify({ deployment_id: 'dep_1', collector_id: collectorId });
  return {
    deploymentId: 'dep_1', payloadText, signature: signer.key.sign(signedBytes(ENROLLMENT_DOMAIN, payloadText)), now: NOW,
    collectorId, tokenHash: hashToken(`enroll-${collectorId}`), collectorKeyFingerprint: 'collector-fp-1', ...over,
  };
}
const redeemed = (collectorId: string, epoch = 1) => event('CollectorEnrollmentRedeemed', { deploymentId: 'dep_1', epoch, collectorId, collectorKeyFingerprint: 'collector-fp-1' });
const refused = (reason: string, collectorId = 'vm-web') => [event('CollectorEnrollmentRefused', { deploymentId: 'dep_1', collectorId, reason })];

/** Recovered by `next`, proven in epoch 2 with fresh grants. */
const recoveredBy = (next: Identity): Given[] => [
  ...provisioned(id), redeemed('vm-web'), snapshotReceived(id, '2026-11-22T10:05:00.000Z'), ...centralMissing('2026-11-22T10:05:00.000Z'), recoveryClaimed(next),
  sessionProven({ sessionId: 'ses_2', epoch: 2, consoleCredential: { id: 'cc_2', tokenHash: hashToken('console-2'), generation: 2 }, enrollments: [grant('vm-db'), { ...grant('vm-web'), tokenHash: hashToken('enroll-vm-web-2') }] }),
];

describe('decideRedeem', () => {
  it('redeems a collector token of the current epoch, with the collector key fingerprint', () => {
    redeem.given(provisioned(id)).when(cmd(id, 'vm-web')).then([redeemed('vm-web')], { collectorId: 'vm-web', epoch: 1 });
  });

  it('refuses a token already redeemed, and records the refusal', () => {
    redeem.given([...provisioned(id), redeemed('vm-web')]).when(cmd(id, 'vm-web')).thenRejects('unauthenticated', /token_already_used/, refused('token_already_used'));
  });

  it('refuses a token at the instant it expires', () => {
    redeem.given(provisioned(id)).when(cmd(id, 'vm-web', { now: '2026-11-23T10:00:00.000Z' })).thenRejects('unauthenticated', /token_expired/, refused('token_expired'));
  });

  it('refuses a token of no grant (unknown, or of another collector)', () => {
    redeem.given(provisioned(id)).when(cmd(id, 'vm-web', { tokenHash: hashToken('enroll-vm-db') })).thenRejects('unauthenticated', /unknown_or_superseded_token/, refused('unknown_or_superseded_token'));
  });

  it('refuses a token of an epoch a recovery superseded, and redeems the new epoch\'s token', () => {
    const next = identity();
    redeem.given(recoveredBy(next)).when(cmd(next, 'vm-db')).then([redeemed('vm-db', 2)], { collectorId: 'vm-db', epoch: 2 });
    redeem.given(recoveredBy(next)).when(cmd(next, 'vm-web')).thenRejects('unauthenticated', /unknown_or_superseded_token/, refused('unknown_or_superseded_token'));
    redeem.given(recoveredBy(next)).when(cmd(next, 'vm-web', { tokenHash: hashToken('enroll-vm-web-2') })).then([redeemed('vm-web', 2)]);
  });

  it('refuses a redemption not signed by the deployment\'s current key, recording nothing', () => {
    redeem.given(recoveredBy(identity())).when(cmd(id, 'vm-db')).thenRejects('unauthenticated', /bad signature/);
  });
});

describe('enrollmentValid', () => {
  const valid = spec((m, c: { signer: Identity; collectorId: string; fingerprint: string; epoch: number }) =>
    enrollmentValid(m, cmd(c.signer, c.collectorId), c.collectorId, c.fingerprint, c.epoch), AUTHORITY);

  it('holds for the redeemed key in the current epoch, and records nothing', () => {
    valid.given([...provisioned(id), redeemed('vm-web')]).when({ signer: id, collectorId: 'vm-web', fingerprint: 'collector-fp-1', epoch: 1 }).then([], { valid: true, currentEpoch: 1 });
  });

  it('does not hold for another key, an unredeemed grant or an earlier epoch', () => {
    const given = [...provisioned(id), redeemed('vm-web')];
    valid.given(given).when({ signer: id, collectorId: 'vm-web', fingerprint: 'other-fp', epoch: 1 }).then([], { valid: false, currentEpoch: 1 });
    valid.given(given).when({ signer: id, collectorId: 'vm-db', fingerprint: 'collector-fp-1', epoch: 1 }).then([], { valid: false, currentEpoch: 1 });
    const next = identity();
    valid.given(recoveredBy(next)).when({ signer: next, collectorId: 'vm-web', fingerprint: 'collector-fp-1', epoch: 1 }).thenAccepts((_, r) => assert.deepEqual(r, { valid: false, currentEpoch: 2 }));
  });
});
