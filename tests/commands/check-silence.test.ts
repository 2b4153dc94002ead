import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { decideSilenceCheck } from '../../src/commands/check-silence.js';
import { eventOf, type EventData } from '../../src/events/union.js';
import { MonitoringSchema, type SilenceSettings } from '../../src/projections/monitoring-settings.js';
import { SOURCE_SILENT_RULE, systemAlertId } from '../../src/commands/system-alerts.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { MONITORING, type MonitoringState } from '../../src/projections/monitoring.js';
import { spec, type Given } from '../helpers/decider-spec.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

const settings = (over: Record<string, unknown> = {}): SilenceSettings => v.parse(MonitoringSchema, { silence: { floorSeconds: 60, ceilingSeconds: 3600, multiplier: 3, minSamples: 3, ...over } }).silence;
type Check = { now: string; settings?: SilenceSettings };
const check = spec((m, c: Check) => decideSilenceCheck({ monitoring: m.monitoring, alerts: m.alerts }, c.settings ?? settings(), { now: c.now }));

/** One batch from `syslog/web-1` at `at`. */
const report = (at: string, instance = 'web-1'): Given => ({ ...eventOf('EventsIngested', { events: [normalizedEvent({ id: `e-${instance}-${at}`, source: { adapter: 'syslog', instance, recordId: at } })] }), at });
/** A source reporting every 30 s from 10:00:00 to 10:01:30. */
const regular: Given[] = ['10:00:00', '10:00:30', '10:01:00', '10:01:30'].map((t) => report(`2026-11-22T${t}.000Z`));
const LAST = '2026-11-22T10:01:30.000Z';

/** The alert id the check raises for `source` silent since `lastSeenAt`, in models with no other alerts. */
const idFor = (source: string, lastSeenAt: string) => systemAlertId({ alerts: new Map() } as unknown as AlertsState, SOURCE_SILENT_RULE, source, lastSeenAt);

describe('decideSilenceCheck', () => {
  it('says nothing while a regular source is within three times its usual cadence (90 s, above the 60 s floor)', () => {
    check.given(regular).when({ now: '2026-11-22T10:03:00.000Z' }).then([], { silenced: [], resumed: [] });
  });

  it('declares a regular source silent past its threshold and raises a vigil.source-silent alert with its last event time and usual cadence', () => {
    const alertId = idFor('syslog/web-1', LAST);
    const { events, models } = check.given(regular).when({ now: '2026-11-22T10:03:01.000Z' }).thenAccepts((events, result) => {
      assert.deepEqual(result, { silenced: ['syslog/web-1'], resumed: [] });
      assert.deepEqual(events[0], eventOf('SourceWentSilent', { source: 'syslog/web-1', kind: 'source', lastSeenAt: LAST, usualCadenceMs: 30_000, thresholdMs: 90_000, alertId }));
      const raised = events[1]!.data as EventData<'AlertRaised'>;
      assert.equal(events[1]!.type, 'AlertRaised');
      assert.equal(raised.ruleId, SOURCE_SILENT_RULE);
      assert.equal(raised.groupKey, 'syslog/web-1');
      assert.match(raised.title, /Source went silent: syslog\/web-1 \(last event 2026-11-22T10:01:30.000Z, usual cadence 30 s\)/);
      assert.deepEqual((raised.matchReason as { fields: Array<{ field: string; value: unknown }> }).fields.map((f) => [f.field, f.value]), [['source', 'syslog/web-1'], ['kind', 'source'], ['lastEventAt', LAST], ['usualCadenceSeconds', 30], ['silentAfterSeconds', 90]]);
    });
    assert.equal(events.length, 2);
    const alert = models.alerts.alerts.get(alertId);
    assert.equal(alert?.status, 'open', 'the alert is in the alerts model like any other');
  });

  it('does not declare the same silence twice', () => {
    const first = check.given(regular).when({ now: '2026-11-22T10:05:00.000Z' }).thenAccepts(() => {});
    const again = decideSilenceCheck({ monitoring: first.models.monitoring, alerts: first.models.alerts }, settings(), { now: '2026-11-22T11:00:00.000Z' });
    assert.ok(again.ok);
    assert.deepEqual(again.events, []);
  });

  it('resumes a silent source that reported again, resolving its alert with a history entry', () => {
    const alertId = idFor('syslog/web-1', LAST);
    const silent = check.given(regular).when({ now: '2026-11-22T10:05:00.000Z' }).thenAccepts(() => {});
    const given: Given[] = [...regular, ...silent.events.map((e) => ({ ...e, at: '2026-11-22T10:05:00.000Z' })), report('2026-11-22T10:07:00.000Z')];
    const { models } = check.given(given).when({ now: '2026-11-22T10:07:30.000Z' }).then([
      eventOf('SourceResumed', { source: 'syslog/web-1', resumedAt: '2026-11-22T10:07:00.000Z', silentSince: LAST, alertId }),
      eventOf('AlertReviewed', { alertId, from: 'open', to: 'dismissed', reason: `source reported again at 2026-11-22T10:07:00.000Z (silent since ${LAST})`, principal: SOURCE_SILENT_RULE, authentication: 'system' }),
    ], { silenced: [], resumed: ['syslog/web-1'] });
    const alert = models.alerts.alerts.get(alertId)!;
    assert.equal(alert.status, 'dismissed');
    assert.equal(alert.reviewHistory.length, 1);
    assert.equal(alert.reviewHistory[0]!.principal, SOURCE_SILENT_RULE);
  });

  it('uses the ceiling for a source whose cadence is not learned yet', () => {
    const once = [report('2026-11-22T10:00:00.000Z')];
    check.given(once).when({ now: '2026-11-22T11:00:00.000Z' }).then([]);
    check.given(once).when({ now: '2026-11-22T11:00:00.001Z' }).thenAccepts((events) => {
      assert.deepEqual((events[0]!.data as EventData<'SourceWentSilent'>).usualCadenceMs, null);
      assert.equal((events[0]!.data as EventData<'SourceWentSilent'>).thresholdMs, 3_600_000);
    });
  });

  it('takes a threshold set for the source over the learned one', () => {
    check.given(regular).when({ now: '2026-11-22T10:05:00.000Z', settings: settings({ sources: { 'syslog/*': { silentAfterSeconds: 600 } } }) }).then([]);
  });

  it('stays quiet in declared quiet hours and expected silences, and speaks once they are over', () => {
    const quiet = settings({ quietHours: [{ sources: ['syslog/web-*'], from: '22:00', to: '10:30' }] });
    check.given(regular).when({ now: '2026-11-22T10:20:00.000Z', settings: quiet }).then([]);
    check.given(regular).when({ now: '2026-11-22T10:30:00.000Z', settings: quiet }).thenAccepts((events) => assert.equal(events.length, 2));
    const maintenance = settings({ expectedSilences: [{ sources: ['syslog/web-1'], from: '2026-11-22T10:00:00Z', until: '2026-11-22T12:00:00Z', reason: 'maintenance' }] });
    check.given(regular).when({ now: '2026-11-22T11:59:59.000Z', settings: maintenance }).then([]);
    check.given(regular).when({ now: '2026-11-22T12:00:00.000Z', settings: maintenance }).thenAccepts((events) => assert.equal(events.length, 2));
  });

  it('declares a collector that stops submitting silent, under its own key', () => {
    const sub = (at: string, sequence: number): Given => ({
      ...eventOf('CollectorSubmissionAccepted', { collectorId: 'web-01', epoch: 1, sequence, digest: 'd', signature: 's', collectedAt: at, facts: [], events: [], result: { collectorId: 'web-01', sequence, graph: { entities: 0, relationships: 0 }, acceptedEvents: 0 } }),
      at,
    });
    check.given([sub('2026-11-22T10:00:00.000Z', 1), sub('2026-11-22T10:01:00.000Z', 2), sub('2026-11-22T10:02:00.000Z', 3), sub('2026-11-22T10:03:00.000Z', 4)])
      .when({ now: '2026-11-22T10:06:00.001Z' })
      .thenAccepts((events, result) => {
        assert.deepEqual(result.silenced, ['collector:web-01']);
        assert.match((events[1]!.data as EventData<'AlertRaised'>).title, /^Collector went silent: collector:web-01/);
      });
  });

  it('resolves nothing but still resumes when an analyst already dismissed the alert', () => {
    const alertId = idFor('syslog/web-1', LAST);
    const silent = check.given(regular).when({ now: '2026-11-22T10:05:00.000Z' }).thenAccepts(() => {});
    const dismissed = eventOf('AlertReviewed', { alertId, from: 'open', to: 'dismissed', reason: 'known outage', principal: 'analyst-user', authentication: 'bearer' });
    check.given([...regular, ...silent.events, dismissed, report('2026-11-22T10:07:00.000Z')]).when({ now: '2026-11-22T10:08:00.000Z' })
      .then([eventOf('SourceResumed', { source: 'syslog/web-1', resumedAt: '2026-11-22T10:07:00.000Z', silentSince: LAST, alertId })]);
  });

  it('gives every source its threshold again after a restart before calling it silent', () => {
    const after = spec((m, c: Check & { since: string }) => decideSilenceCheck({ monitoring: m.monitoring, alerts: m.alerts }, settings(), { now: c.now }, { watchingSince: c.since }));
    after.given(regular).when({ now: '2026-11-22T14:01:30.000Z', since: '2026-11-22T14:00:00.000Z' }).then([]);
    after.given(regular).when({ now: '2026-11-22T14:01:30.001Z', since: '2026-11-22T14:00:00.000Z' }).thenAccepts((events) => {
      assert.equal((events[0]!.data as EventData<'SourceWentSilent'>).lastSeenAt, LAST, 'the alert still says when the source last reported');
    });
  });

  it('is switched off by silence.enabled: false, but still resumes a source that reports again', () => {
    check.given(regular).when({ now: '2026-11-23T10:00:00.000Z', settings: settings({ enabled: false }) }).then([]);
  });
});
