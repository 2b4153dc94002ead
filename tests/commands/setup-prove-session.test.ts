import { describe, it } from 'node:test';
import { hashToken } from '../../src/auth/tokens.js';
import { decideProve, type ProveCommand } from '../../src/setup/commands/prove-session.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import {
  HASH, centralMissing, claimed, grant, identity, proof, provisioned, recoveryClaimed, sessionProven, snapshotReceived,
} from '../helpers/setup-fixtures.js';

const id = identity();
const NOW = '2026-11-22T10:30:00.000Z';
const prove = spec(decideProve, AUTHORITY);
const cmd = (over: Partial<ProveCommand> = {}): ProveCommand => ({
  sessionId: 'ses_1', sessionTokenHash: HASH.session, signature: proof(id), now: NOW,
  consoleCredential: { id: 'cc_1', tokenHash: HASH.console }, enrollments: [grant('vm-db'), grant('vm-web')], ...over,
});

describe('decideProve', () => {
  it('releases provisioning on a valid proof: epoch 1, console credential generation 1, a grant per remote VM', () => {
    prove.given(claimed(id)).when(cmd()).then([sessionProven()], { deploymentId: 'dep_1', epoch: 1, generation: 1 });
  });

  it('refuses a signature by another key than the claimed one', () => {
    prove.given(claimed(id)).when(cmd({ signature: proof(identity()) })).thenRejects('unauthenticated', /possession proof does not verify/);
  });

  it('refuses a signature over another challenge', () => {
    prove.given(claimed(id)).when(cmd({ signature: proof(id, 'ses_1', 'challenge-other') })).thenRejects('unauthenticated', /possession proof/);
  });

  it('refuses a wrong session token like an unknown session', () => {
    prove.given(claimed(id)).when(cmd({ sessionTokenHash: hashToken('guess') })).thenRejects('unauthenticated', /invalid or expired session token/);
  });

  it('refuses a session token at the instant it expires', () => {
    prove.given(claimed(id)).when(cmd({ now: '2026-11-22T12:00:00.000Z' })).thenRejects('unauthenticated', /invalid or expired session token/);
  });

  it('releases provisioning once: a second proof is a conflict', () => {
    prove.given(provisioned(id)).when(cmd()).thenRejects('conflict', /the session is proven; provisioning is released once/);
  });

  it('refuses grants that do not match the remote VMs of the scope', () => {
    prove.given(claimed(id)).when(cmd({ enrollments: [grant('vm-web')] })).thenRejects('conflict', /does not match the scope/);
  });

  it('proves a recovery session in the epoch of its claim, with the next console credential generation', () => {
    const next = identity();
    const recovering = [...provisioned(id), snapshotReceived(id, '2026-11-22T10:05:00.000Z'), ...centralMissing('2026-11-22T10:05:00.000Z'), recoveryClaimed(next)];
    prove.given(recovering).when(cmd({ sessionId: 'ses_2', sessionTokenHash: hashToken('recovery-session-token'), signature: proof(next, 'ses_2', 'challenge-2'), consoleCredential: { id: 'cc_2', tokenHash: HASH.console } }))
      .then([sessionProven({ sessionId: 'ses_2', epoch: 2, consoleCredential: { id: 'cc_2', tokenHash: HASH.console, generation: 2 } })], { deploymentId: 'dep_1', epoch: 2, generation: 2 });
  });

  it('refuses the first session of a deployment once a recovery took it over', () => {
    const recovered = [...provisioned(id), snapshotReceived(id, '2026-11-22T10:05:00.000Z'), ...centralMissing('2026-11-22T10:05:00.000Z'), recoveryClaimed(identity())];
    prove.given(recovered).when(cmd()).thenRejects('conflict', /no longer controls its deployment/);
  });
});
