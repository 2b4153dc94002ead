import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { hashToken } from '../../src/auth/tokens.js';
import { decideRecoveryClaim, type RecoveryClaimCommand } from '../../src/setup/commands/claim-recovery.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { SCOPE, centralMissing, identity, provisioned, recoveryClaimed, sessionCreated, snapshotReceived, type Identity } from '../helpers/setup-fixtures.js';

const id = identity();
const next = identity();
const HEARTBEAT = '2026-11-22T10:05:00.000Z';
const reporting = [...provisioned(id), snapshotReceived(id, HEARTBEAT)];
const missing = [...reporting, ...centralMissing(HEARTBEAT)];
const claimRecovery = spec(decideRecoveryClaim, AUTHORITY);
const cmd = (key: Identity = next, over: Partial<RecoveryClaimCommand> = {}): RecoveryClaimCommand => ({
  tokenHash: hashToken('recovery-token'), key: key.pub, sessionId: 'ses_2', sessionTokenHash: hashToken('recovery-session-token'),
  sessionTokenExpiresAt: '2026-11-22T14:00:00.000Z', challenge: 'challenge-2', ...over,
});
const BAD = /recovery token is invalid or already used/;

describe('decideRecoveryClaim', () => {
  it('claims the recovery with a new identity key: a recovery session, the next epoch, the approved scope', () => {
    claimRecovery.given(missing).when(cmd()).then([recoveryClaimed(next)], { deploymentId: 'dep_1', scope: SCOPE, epoch: 2 });
  });

  it('accepts a narrower scope, and refuses a wider one naming the approved scope', () => {
    claimRecovery.given(missing).when(cmd(next, { scope: { central_vm_id: 'vm-central', vms: ['vm-central', 'vm-web'] } })).thenAccepts(() => undefined);
    const r = claimRecovery.given(missing).when(cmd(next, { scope: { central_vm_id: 'vm-central', vms: [...SCOPE.vms, 'vm-new'] } }))
      .thenRejects('forbidden', /cannot widen the approved installation scope/);
    assert.deepEqual(r.details, { installation_scope: SCOPE });
  });

  it('is single use: a claimed token is refused like an unknown one', () => {
    claimRecovery.given([...missing, recoveryClaimed(next)]).when(cmd(identity(), { sessionId: 'ses_3' })).thenRejects('unauthenticated', BAD);
    claimRecovery.given(missing).when(cmd(next, { tokenHash: hashToken('guess') })).thenRejects('unauthenticated', BAD);
  });

  it('refuses a claim while the central VM is not missing', () => {
    const back = [...missing, snapshotReceived(id, '2026-11-22T10:40:00.000Z')];
    claimRecovery.given(back).when(cmd()).thenRejects('conflict', /the deployment is reporting; recovery is claimed while the central VM is missing/);
  });

  it('needs a new identity key: the current one is refused', () => {
    claimRecovery.given(missing).when(cmd(id)).thenRejects('conflict', /needs a new deployment identity key/);
  });

  it('refuses a session id already in use', () => {
    claimRecovery.given([...missing, sessionCreated({ sessionId: 'ses_2', tokenHash: 'hash-2' })]).when(cmd()).thenRejects('conflict', /session id collision/);
  });
});
