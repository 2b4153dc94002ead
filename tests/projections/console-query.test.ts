import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { ConsoleViewSchema, consoleView, deploymentState } from '../../src/projections/console-query.js';
import { detectionPlan } from '../../src/projections/plan.js';
import type { ActivityState } from '../../src/projections/activity.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import type { DetectionState } from '../../src/projections/detection.js';
import type { SourcesState } from '../../src/projections/sources.js';
import { memoryModels } from '../helpers/decider-spec.js';
import { alertRaised } from '../helpers/event-fixtures.js';
import type { ReporterStatus } from '../../src/services/deployment-reporter.js';

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

describe('consoleView', () => {
  it('counts alerts per hour of the last day by level (first evidence time), oldest hour first, and leaves older and later ones out', () => {
    const m = memoryModels();
    const raised = (id: string, level: string, firstSeen: string) => alertRaised({ alertId: id, groupKey: id, level, firstSeen, lastSeen: firstSeen });
    m.append([
      raised('a1', 'high', '2026-11-22T11:59:00.000Z'), raised('a2', 'high', '2026-11-22T11:00:00.000Z'), raised('now', 'medium', '2026-11-22T12:00:00.000Z'), raised('a3', 'low', '2026-11-21T13:30:00.000Z'),
      raised('old', 'high', '2026-11-21T12:59:59.000Z'), raised('future', 'high', '2026-11-22T13:00:00.000Z'),
    ]);
    const view = consoleView({
      alerts: m.alerts, activity: m.activity, now: NOW,
      plan: detectionPlan(m.detection, m.sources, NOW, 24),
    });
    const hours = (counts: Record<number, number>) => Array.from({ length: 24 }, (_, i) => counts[i] ?? 0);
    assert.deepEqual(view.alerts.perHourByLevel, { high: hours({ 22: 2 }), low: hours({ 0: 1 }), medium: hours({ 23: 1 }) }, 'the current hour is the last');
    assert.equal(view.alerts.total, 6);
    assert.deepEqual(view.alerts.openBySeverity, { high: 4, low: 1, medium: 1 });
    v.parse(ConsoleViewSchema, view);
  });
});
