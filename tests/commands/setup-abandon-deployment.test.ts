import { describe, it } from 'node:test';
import { decideAbandonByBrowser, decideAbandonByInstaller } from '../../src/setup/commands/abandon-deployment.js';
import { decidePhase } from '../../src/setup/commands/report-phase.js';
import { event } from '../../src/setup/events.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { ACCOUNT, HASH, claimed, identity, provisioned, snapshotReceived } from '../helpers/setup-fixtures.js';

const id = identity();
const NOW = '2026-11-22T10:30:00.000Z';
const abandoned = (over: Record<string, string> = {}) =>
  event('DeploymentAbandoned', { deploymentId: 'dep_1', tenantId: 't-acme', principal: 't-acme/alice', via: 'browser', reason: 'the run died', from: 'provisioning', ...over });

describe('decideAbandonByBrowser', () => {
  const abandon = spec(decideAbandonByBrowser, AUTHORITY);
  const cmd = { ...ACCOUNT, deploymentId: 'dep_1', reason: 'the run died' };

  it('abandons a deployment stuck in provisioning, with the account as principal and the reason', () => {
    abandon.given(claimed(id)).when(cmd).then([abandoned()], { deploymentId: 'dep_1', from: 'provisioning' });
  });

  it('answers another tenant as if the deployment did not exist', () => {
    abandon.given(provisioned(id)).when({ ...cmd, tenantId: 't-other', userId: 'carol' }).thenRejects('not_found', /dep_1/);
  });

  it('refuses a live deployment, whose central instance reports', () => {
    abandon.given([...provisioned(id), snapshotReceived(id, '2026-11-22T10:05:00.000Z')]).when(cmd).thenRejects('conflict', /live/);
  });

  it('refuses to abandon twice', () => {
    abandon.given([...provisioned(id), abandoned()]).when(cmd).thenRejects('conflict', /already abandoned/);
  });
});

describe('decideAbandonByInstaller', () => {
  const abandon = spec(decideAbandonByInstaller, AUTHORITY);
  const cmd = { sessionId: 'ses_1', sessionTokenHash: HASH.session, now: NOW, reason: 'check failed after the claim' };

  it('abandons the deployment its session controls, the session id as principal', () => {
    abandon.given(provisioned(id)).when(cmd)
      .then([abandoned({ principal: 'ses_1', via: 'installer', reason: 'check failed after the claim' })], { deploymentId: 'dep_1', from: 'provisioning' });
  });

  it('refuses a wrong session token as unauthenticated', () => {
    abandon.given(provisioned(id)).when({ ...cmd, sessionTokenHash: HASH.setup }).thenRejects('unauthenticated', /session token/);
  });
});

describe('an abandoned deployment', () => {
  it('takes no more phase reports from its installer session', () => {
    spec(decidePhase, AUTHORITY).given([...provisioned(id), abandoned()])
      .when({ sessionId: 'ses_1', sessionTokenHash: HASH.session, now: NOW, phase: 'discovery_completed' })
      .thenRejects('conflict', /abandoned/);
  });
});
