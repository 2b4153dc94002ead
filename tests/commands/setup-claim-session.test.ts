import { describe, it } from 'node:test';
import { decideClaim, decideConnect, type ClaimCommand } from '../../src/setup/commands/claim-session.js';
import { event } from '../../src/setup/events.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { HASH, SCOPE, centralMissing, claimed, connected, identity, provisioned, recoveryClaimed, sessionClaimed, sessionCreated, snapshotReceived } from '../helpers/setup-fixtures.js';

const id = identity();
const NOW = '2026-11-22T10:30:00.000Z';
const BAD_TOKEN = /setup token is invalid, expired or already used/;

describe('decideConnect', () => {
  const connect = spec(decideConnect, AUTHORITY);

  it('records that an installer holds a live setup token, consuming nothing', () => {
    connect.given([sessionCreated()]).when({ tokenHash: HASH.setup, now: NOW })
      .then([event('SetupSessionConnected', { sessionId: 'ses_1' })], { sessionId: 'ses_1', expiresAt: '2026-11-22T11:00:00.000Z' });
  });

  it('accepts a repeated connect while the session is not claimed', () => {
    connect.given(connected()).when({ tokenHash: HASH.setup, now: NOW }).then([event('SetupSessionConnected', { sessionId: 'ses_1' })]);
  });

  it('refuses a setup token at the instant it expires', () => {
    connect.given([sessionCreated()]).when({ tokenHash: HASH.setup, now: '2026-11-22T11:00:00.000Z' }).thenRejects('unauthenticated', BAD_TOKEN);
  });

  it('refuses a token the claim consumed', () => {
    connect.given(claimed(id)).when({ tokenHash: HASH.setup, now: NOW }).thenRejects('unauthenticated', BAD_TOKEN);
  });

  it('refuses an unknown token', () => {
    connect.given([sessionCreated()]).when({ tokenHash: HASH.session, now: NOW }).thenRejects('unauthenticated', BAD_TOKEN);
  });
});

describe('decideClaim', () => {
  const claim = spec(decideClaim, AUTHORITY);
  const cmd = (over: Partial<ClaimCommand> = {}): ClaimCommand => ({
    tokenHash: HASH.setup, now: NOW, key: id.pub, scope: SCOPE, deploymentId: 'dep_1', sessionTokenHash: HASH.session,
    sessionTokenExpiresAt: '2026-11-22T12:00:00.000Z', challenge: 'challenge-1', ...over,
  });

  it('binds the identity key and the scope to a new deployment on the first valid claim', () => {
    claim.given(connected()).when(cmd()).then([sessionClaimed(id)], { sessionId: 'ses_1' });
  });

  it('refuses a claim before the installer connected', () => {
    claim.given([sessionCreated()]).when(cmd()).thenRejects('conflict', /must connect before it claims/);
  });

  it('refuses a second claim with the same token: the first one consumed it', () => {
    claim.given(claimed(id)).when(cmd({ key: identity().pub, deploymentId: 'dep_2' })).thenRejects('unauthenticated', BAD_TOKEN);
  });

  it('refuses an identity key another deployment holds', () => {
    const other = [sessionCreated({ sessionId: 'ses_0', tokenHash: 'hash-0' }), event('SetupSessionConnected', { sessionId: 'ses_0' }), sessionClaimed(id, { sessionId: 'ses_0', deploymentId: 'dep_0' })];
    claim.given([...other, ...connected()]).when(cmd()).thenRejects('conflict', /already bound/);
  });

  it('refuses an identity key that a recovery retired', () => {
    const retired = [...provisioned(id), snapshotReceived(id, '2026-11-22T10:05:00.000Z'), ...centralMissing('2026-11-22T10:05:00.000Z'), recoveryClaimed(identity())];
    const fresh = [sessionCreated({ sessionId: 'ses_9', tokenHash: 'hash-9' }), event('SetupSessionConnected', { sessionId: 'ses_9' })];
    claim.given([...retired, ...fresh]).when(cmd({ tokenHash: 'hash-9', deploymentId: 'dep_9', now: '2026-11-22T10:40:00.000Z' })).thenRejects('conflict', /already bound/);
  });

  it('refuses a deployment id that is already taken', () => {
    const other = [sessionCreated({ sessionId: 'ses_0', tokenHash: 'hash-0' }), event('SetupSessionConnected', { sessionId: 'ses_0' }), sessionClaimed(identity(), { sessionId: 'ses_0' })];
    claim.given([...other, ...connected()]).when(cmd()).thenRejects('conflict', /deployment id collision/);
  });

  it('binds the deployment to the account that created the session', () => {
    claim.given([sessionCreated({ tenantId: 't-other', userId: 'carol' }), event('SetupSessionConnected', { sessionId: 'ses_1' })]).when(cmd())
      .then([sessionClaimed(id, { tenantId: 't-other', userId: 'carol' })]);
  });
});
