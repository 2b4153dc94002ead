import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { deploymentState } from '../../src/projections/console-query.js';
import type { ReporterStatus } from '../../src/instance/deployment-reporter.js';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const dep = { deploymentId: 'dep_AAAAAAAAAAAAAAAAAAAAAA', authorityUrl: 'https://setup.example' };
const reporter = (over: Partial<ReporterStatus>): ReporterStatus => ({
  deploymentId: dep.deploymentId, authorityUrl: dep.authorityUrl, intervalSeconds: 60, lastAttemptAt: '2026-11-22T11:59:30.000Z',
  lastDeliveredAt: '2026-11-22T11:59:30.000Z', authorityStatus: 'reporting', failingSince: null, lastError: null, ...over,
});

describe('deploymentState', () => {
  it('says an instance without a deployment is not a managed deployment, with no recovery action', () => {
    assert.deepEqual({ state: deploymentState(undefined, NOW).state, action: deploymentState(undefined, NOW).centralMissing.recoveryAction }, { state: 'not_configured', action: null });
  });

  it('says reporting while snapshots are delivered, and still names the recovery action', () => {
    const d = deploymentState({ ...dep, reporter: reporter({}) }, NOW);
    assert.equal(d.state, 'reporting');
    assert.equal(d.authorityStatus, 'reporting');
    assert.equal(d.centralMissing.likely, false);
    assert.match(d.centralMissing.recoveryAction!, /https:\/\/setup\.example.*recovery token \(lrc_\.\.\.\).*--recovery/);
  });

  it('says not yet reported before the first attempt', () => {
    assert.equal(deploymentState({ ...dep, reporter: reporter({ lastAttemptAt: null, lastDeliveredAt: null, authorityStatus: null }) }, NOW).state, 'not_yet_reported');
    assert.equal(deploymentState(dep, NOW).state, 'not_yet_reported');
    assert.equal(deploymentState({ ...dep, reporter: reporter({ lastDeliveredAt: null, authorityStatus: null }) }, NOW).state, 'not_yet_reported', 'the first attempt is in flight');
  });

  it('says not delivered when snapshots fail, and central_missing likely once the last delivery is past the authority heartbeat timeout', () => {
    const recent = deploymentState({ ...dep, reporter: reporter({ lastDeliveredAt: '2026-11-22T11:50:00.000Z', failingSince: '2026-11-22T11:51:00.000Z', lastError: 'fetch failed' }) }, NOW);
    assert.deepEqual([recent.state, recent.centralMissing.likely, recent.lastError], ['not_delivered', false, 'fetch failed']);
    const old = deploymentState({ ...dep, reporter: reporter({ lastDeliveredAt: '2026-11-22T11:44:00.000Z', failingSince: '2026-11-22T11:45:00.000Z' }) }, NOW);
    assert.deepEqual([old.state, old.centralMissing.likely], ['not_delivered', true]);
    const never = deploymentState({ ...dep, reporter: reporter({ lastDeliveredAt: null, authorityStatus: null, failingSince: '2026-11-22T11:00:00.000Z' }) }, NOW);
    assert.equal(never.centralMissing.likely, true);
  });
});
