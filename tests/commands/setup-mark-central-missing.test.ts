import { describe, it } from 'node:test';
import { hashToken } from '../../src/auth/tokens.js';
import { decideCentralMissing, type MarkMissingCommand } from '../../src/setup/commands/mark-central-missing.js';
import { event } from '../../src/setup/events.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { centralMissing, identity, provisioned, recoveryClaimed, snapshotReceived } from '../helpers/setup-fixtures.js';

const id = identity();
const HEARTBEAT = '2026-11-22T10:05:00.000Z';
const markMissing = spec(decideCentralMissing, AUTHORITY);
const recovery = { recoveryId: 'rcv_2', tokenHash: hashToken('recovery-token-2'), ciphertext: 'ciphertext-2', keyId: 'key-1' };
const cmd = (now: string): MarkMissingCommand => ({ deploymentId: 'dep_1', now, timeoutSeconds: 900, recovery });
const reporting = [...provisioned(id), snapshotReceived(id, HEARTBEAT)];
const missing = event('DeploymentCentralMissing', { deploymentId: 'dep_1', lastHeartbeatAt: HEARTBEAT, timeoutSeconds: 900 });

describe('decideCentralMissing', () => {
  it('marks a deployment silent past the timeout missing and issues its one recovery token', () => {
    markMissing.given(reporting).when(cmd('2026-11-22T10:20:00.001Z'))
      .then([missing, event('RecoveryTokenIssued', { deploymentId: 'dep_1', ...recovery })], { issued: true });
  });

  it('leaves a deployment alone at exactly the timeout', () => {
    markMissing.given(reporting).when(cmd('2026-11-22T10:20:00.000Z')).thenRejects('conflict', /not overdue/);
  });

  it('does not watch a deployment that never reported', () => {
    markMissing.given(provisioned(id)).when(cmd('2026-11-23T10:00:00.000Z')).thenRejects('conflict', /not overdue/);
  });

  it('refuses a deployment already missing, so the token is issued once', () => {
    markMissing.given([...reporting, ...centralMissing(HEARTBEAT)]).when(cmd('2026-11-22T11:00:00.000Z')).thenRejects('conflict', /not overdue/);
  });

  it('issues no second token while the first is unclaimed (the central came back, then went silent again)', () => {
    const back = '2026-11-22T10:40:00.000Z';
    markMissing.given([...reporting, ...centralMissing(HEARTBEAT), snapshotReceived(id, back)]).when(cmd('2026-11-22T11:00:00.000Z'))
      .then([event('DeploymentCentralMissing', { deploymentId: 'dep_1', lastHeartbeatAt: back, timeoutSeconds: 900 })], { issued: false });
  });

  it('issues a new token once the earlier one was claimed and the recovered central went silent', () => {
    const next = identity();
    const back = '2026-11-22T10:40:00.000Z';
    markMissing.given([...reporting, ...centralMissing(HEARTBEAT), recoveryClaimed(next), snapshotReceived(next, back)]).when(cmd('2026-11-22T11:00:00.000Z'))
      .then([event('DeploymentCentralMissing', { deploymentId: 'dep_1', lastHeartbeatAt: back, timeoutSeconds: 900 }), event('RecoveryTokenIssued', { deploymentId: 'dep_1', ...recovery })], { issued: true });
  });
});
