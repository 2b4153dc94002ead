import { describe, it } from 'node:test';
import { decideCreateSession, decideRevealRecovery, decideSignIn, decideSignOut } from '../../src/setup/commands/browser-commands.js';
import { event } from '../../src/setup/events.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { ACCOUNT, HASH, centralMissing, identity, provisioned, recoveryClaimed, sessionCreated, snapshotReceived } from '../helpers/setup-fixtures.js';

const id = identity();
const missing = [...provisioned(id), snapshotReceived(id, '2026-11-22T10:05:00.000Z'), ...centralMissing('2026-11-22T10:05:00.000Z')];

describe('decideSignIn and decideSignOut', () => {
  it('records a sign-in by the hashes of its cookie and CSRF token, with its expiry', () => {
    const cmd = { ...ACCOUNT, browserSessionHash: 'b-hash', csrfHash: 'c-hash', expiresAt: '2026-11-22T18:00:00.000Z' };
    spec((_, c: typeof cmd) => decideSignIn(c), AUTHORITY).given([]).when(cmd)
      .then([event('BrowserSignedIn', cmd)], { expiresAt: '2026-11-22T18:00:00.000Z' });
  });

  it('records a sign-out by the cookie hash', () => {
    spec((_, hash: string) => decideSignOut(hash), AUTHORITY).given([]).when('b-hash').then([event('BrowserSignedOut', { browserSessionHash: 'b-hash' })], null);
  });
});

describe('decideCreateSession', () => {
  const create = spec(decideCreateSession, AUTHORITY);
  const cmd = { ...ACCOUNT, sessionId: 'ses_2', tokenHash: 'other-setup-hash', expiresAt: '2026-11-22T11:00:00.000Z' };

  it('creates a setup session for the signed-in account', () => {
    create.given([sessionCreated()]).when(cmd)
      .then([event('SetupSessionCreated', { sessionId: 'ses_2', ...ACCOUNT, tokenHash: 'other-setup-hash', expiresAt: '2026-11-22T11:00:00.000Z' })], { sessionId: 'ses_2', expiresAt: '2026-11-22T11:00:00.000Z' });
  });

  it('refuses a session id that is already taken', () => {
    create.given([sessionCreated()]).when({ ...cmd, sessionId: 'ses_1' }).thenRejects('conflict', /collision/);
  });

  it('refuses a setup token hash that is already taken', () => {
    create.given([sessionCreated()]).when({ ...cmd, tokenHash: HASH.setup }).thenRejects('conflict', /collision/);
  });
});

describe('decideRevealRecovery', () => {
  const reveal = spec(decideRevealRecovery, AUTHORITY);

  it('reveals the open recovery token of a deployment to its own tenant, and records who saw it', () => {
    reveal.given(missing).when({ ...ACCOUNT, deploymentId: 'dep_1' })
      .then([event('RecoveryTokenRevealed', { deploymentId: 'dep_1', recoveryId: 'rcv_1', ...ACCOUNT })], { recoveryId: 'rcv_1', ciphertext: 'ciphertext-1', keyId: 'key-1' });
  });

  it('lets another user of the same tenant reveal it', () => {
    reveal.given(missing).when({ tenantId: 't-acme', userId: 'bob', deploymentId: 'dep_1' })
      .then([event('RecoveryTokenRevealed', { deploymentId: 'dep_1', recoveryId: 'rcv_1', tenantId: 't-acme', userId: 'bob' })]);
  });

  it('answers a deployment of another tenant as not found', () => {
    reveal.given(missing).when({ tenantId: 't-other', userId: 'carol', deploymentId: 'dep_1' }).thenRejects('not_found', /no deployment dep_1/);
  });

  it('refuses a deployment whose recovery was already claimed', () => {
    reveal.given([...missing, recoveryClaimed(identity())]).when({ ...ACCOUNT, deploymentId: 'dep_1' }).thenRejects('conflict', /has no open recovery/);
  });
});
