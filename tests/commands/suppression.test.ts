import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { alertingStateOf, evaluateEvidence } from '../../src/commands/alerting/evaluate.js';
import { createRuleCosts } from '../../src/commands/alerting/rule-costs.js';
import { createRuleRunner } from '../../src/commands/alerting/rule-runner.js';
import { accept, type DomainEvent } from '../../src/commands/decision.js';
import { decideSetRuleSuppression } from '../../src/commands/rule-suppression.js';
import { decideReviewAlert } from '../../src/commands/review-alert.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { alertsProjection, type AlertView } from '../../src/projections/alerts.js';
import { effectiveSuppression } from '../../src/projections/detection.js';
import { memoryModels, spec, type Given, type MemoryModels } from '../helpers/decider-spec.js';
import { eventsIngested, normalizedEvent, rulesImported } from '../helpers/event-fixtures.js';

const A = 'aaaaaaaa-0000-4000-8000-0000000005a1';
const C = 'aaaaaaaa-0000-4000-8000-0000000005c1';
const CTX = { now: '2026-11-22T12:00:00.000Z' };
const ACTOR = { id: 'pr_admin', authentication: 'token' };
const SETTINGS = { incidentWindowMs: 3_600_000 };

/** A DNS rule on `evil.example`, suppressed by `suppress` when given (YAML flow text). */
const rule = (suppress?: string) => `title: DNS evil
id: ${A}
status: test
logsource: {product: zeek, service: dns}
detection:
  sel:
    query: evil.example
  condition: sel
${suppress !== undefined ? `suppress: ${suppress}\n` : ''}`;

/** An event_count correlation over rule A, grouped by source and user, suppressed by `suppress` when given. */
const correlation = (suppress?: string) => `${rule()}---
title: Evil lookups
id: ${C}
status: test
correlation: {type: event_count, rules: [${A}], group-by: [src, user], timespan: 1h, condition: {gte: 2}}
${suppress !== undefined ? `suppress: ${suppress}\n` : ''}`;

/** A query of evil.example by `user` from `src` at `minute` minutes past 10:00 (later hours past 59). */
function lookup(id: string, minute: number, user = 'bob', src = '10.0.0.7'): NormalizedEvent {
  const at = new Date(Date.parse('2026-11-22T10:00:00Z') + minute * 60_000).toISOString();
  return normalizedEvent({
    id,
    time: at,
    source: { adapter: 'network-monitor', instance: 'dns', recordId: id },
    entityKeys: [`ip:${src}`],
    attributes: { query: 'evil.example', user, src },
  });
}

/** The detection step as a decider: the batch's events in, the records it appends out. */
function detect(m: MemoryModels, batch: readonly NormalizedEvent[]) {
  const run = createRuleRunner({ batchMs: 60_000, eventMicros: 1_000_000 }, createRuleCosts());
  const out = evaluateEvidence(alertingStateOf(m), batch, CTX, SETTINGS, run);
  return accept(out.events, out.alerts);
}
const detection = spec(detect);

/** Folds batches one after another, as the pipeline would (the events, then what detection appended). */
function after(given: readonly Given[], ...batches: NormalizedEvent[][]): { models: MemoryModels; given: Given[] } {
  const models = memoryModels();
  const all: Given[] = [...given];
  models.append(given);
  for (const batch of batches) {
    const decided = detect(models, batch);
    if (!decided.ok) throw new Error('detection refused');
    const records = [eventsIngested(...batch), ...decided.events];
    models.append(records);
    all.push(...records);
  }
  return { models, given: all };
}

const ofType = (events: readonly DomainEvent[], type: string) =>
  events.filter((e) => e.type === type).map((e) => e.data as Record<string, unknown>);
const alertsOf = (m: MemoryModels, ruleId = A): AlertView[] =>
  [...m.alerts.alerts.values()].filter((a) => a.ruleId === ruleId);

describe('suppression of a detection rule', () => {
  it('raises one alert for the first match, with its window, and folds the batch\'s next matches into it', () => {
    detection
      .given([rulesImported(rule('{by: [user], for: 30m}'))])
      .when([lookup('e1', 0), lookup('e2', 5, 'bob', '10.0.0.8'), lookup('e3', 10)])
      .thenAccepts((events) => {
        const [raised, ...more] = ofType(events, 'AlertRaised');
        assert.equal(more.length, 0);
        assert.equal(raised!['groupKey'], '{"user":"bob"}');
        assert.deepEqual(raised!['suppression'], {
          by: ['user'], for: '30m', forMs: 1_800_000, values: { user: 'bob' }, until: '2026-11-22T10:30:00.000Z',
        });
        assert.equal(raised!['suppressed'], 2);
        assert.equal((raised!['evidence'] as unknown[]).length, 3);
      });
  });

  it('grows the open alert within the window, counting the match as suppressed', () => {
    const { given } = after([rulesImported(rule('{by: [user], for: 30m}'))], [lookup('e1', 0)]);
    const accepted = detection.given(given).when([lookup('e2', 29)]).thenAccepts((events) => {
      assert.deepEqual(ofType(events, 'AlertRaised'), []);
      const [grown] = ofType(events, 'AlertEvidenceAdded');
      assert.equal(grown!['suppressed'], 1);
    });
    const [alert] = alertsOf(accepted.models);
    assert.equal(alert!.suppressedCount, 1);
    assert.equal(alert!.matchCount, 2);
    assert.equal(alert!.evidenceCount, 2);
    assert.equal(alert!.lastSeen, '2026-11-22T10:29:00.000Z');
  });

  it('raises a new alert for a match at or after the end of the window, the earlier one left as it was', () => {
    const { given } = after([rulesImported(rule('{by: [user], for: 30m}'))], [lookup('e1', 0), lookup('e2', 10)]);
    const accepted = detection.given(given).when([lookup('e3', 30), lookup('e4', 31)]).thenAccepts((events) => {
      const [raised] = ofType(events, 'AlertRaised');
      assert.equal(raised!['firstSeen'], '2026-11-22T10:30:00.000Z');
      assert.equal((raised!['suppression'] as { until: string }).until, '2026-11-22T11:00:00.000Z');
      assert.equal(raised!['suppressed'], 1);
      assert.deepEqual(ofType(events, 'AlertEvidenceAdded'), []);
    });
    const alerts = alertsOf(accepted.models);
    assert.deepEqual(alerts.map((a) => [a.suppressedCount, a.evidenceCount]), [[1, 2], [1, 2]]);
    assert.equal(accepted.models.alerts.openByKey.get(`${A}\u0000{"user":"bob"}`), alerts[1]!.id);
  });

  it('raises a second alert in the same batch once the first one\'s window is over', () => {
    detection
      .given([rulesImported(rule('{by: [user], for: 10m}'))])
      .when([lookup('e1', 0), lookup('e2', 9), lookup('e3', 10), lookup('e4', 25)])
      .thenAccepts((events) => {
        const raised = ofType(events, 'AlertRaised');
        assert.deepEqual(raised.map((r) => [r['firstSeen'], r['suppressed'] ?? 0]), [
          ['2026-11-22T10:00:00.000Z', 1],
          ['2026-11-22T10:10:00.000Z', 0],
          ['2026-11-22T10:25:00.000Z', 0],
        ]);
        assert.equal(new Set(raised.map((r) => r['alertId'])).size, 3);
      });
  });

  it('keeps different values apart: each set of values has its own alert', () => {
    detection
      .given([rulesImported(rule('{by: [user, src], for: 1h}'))])
      .when([lookup('e1', 0), lookup('e2', 1, 'eve'), lookup('e3', 2, 'bob', '10.0.0.8'), lookup('e4', 3)])
      .thenAccepts((events) => {
        const raised = ofType(events, 'AlertRaised');
        assert.deepEqual(raised.map((r) => (r['suppression'] as { values: unknown }).values), [
          { user: 'bob', src: '10.0.0.7' }, { user: 'eve', src: '10.0.0.7' }, { user: 'bob', src: '10.0.0.8' },
        ]);
        assert.deepEqual(raised.map((r) => r['suppressed'] ?? 0), [1, 0, 0]);
      });
  });

  it('does not fold a match into a dismissed alert: it raises a new one', () => {
    const { models, given } = after([rulesImported(rule('{by: [user], for: 1h}'))], [lookup('e1', 0)]);
    const alertId = alertsOf(models)[0]!.id;
    const review = decideReviewAlert(models.alerts, alertId, { status: 'dismissed', reason: 'expected' }, { ...CTX, actor: ACTOR });
    assert.ok(review.ok);
    detection.given([...given, ...review.events]).when([lookup('e2', 5)]).thenAccepts((events) => {
      assert.equal(ofType(events, 'AlertRaised').length, 1);
      assert.deepEqual(ofType(events, 'AlertEvidenceAdded'), []);
    });
  });

  it('leaves a rule without suppression as it was: one open alert per system, without a window or counts', () => {
    detection
      .given([rulesImported(rule())])
      .when([lookup('e1', 0), lookup('e2', 300, 'eve')])
      .thenAccepts((events) => {
        const [raised, ...more] = ofType(events, 'AlertRaised');
        assert.equal(more.length, 0);
        assert.equal(raised!['groupKey'], 'ip:10.0.0.7');
        assert.equal('suppression' in raised!, false);
        assert.equal('suppressed' in raised!, false);
      });
  });

  it('records a field without a value as null, and groups such matches together', () => {
    detection
      .given([rulesImported(rule('{by: [account], for: 1h}'))])
      .when([lookup('e1', 0), lookup('e2', 1, 'eve')])
      .thenAccepts((events) => {
        const [raised] = ofType(events, 'AlertRaised');
        assert.deepEqual((raised!['suppression'] as { values: unknown }).values, { account: null });
        assert.equal(raised!['suppressed'], 1);
      });
  });
});

describe('suppression of a correlation', () => {
  it('groups fires by the suppressed group-by fields: another source of the same user grows the alert', () => {
    const { models, given } = after(
      [rulesImported(correlation('{by: [user], for: 1h}'))],
      [lookup('e1', 0), lookup('e2', 1)],
    );
    const [first] = alertsOf(models, C);
    assert.deepEqual(first!.suppression?.values, { user: 'bob' });
    assert.equal(first!.groupKey, '{"user":"bob"}');
    const accepted = detection
      .given(given)
      .when([lookup('e3', 10, 'bob', '10.0.0.9'), lookup('e4', 11, 'bob', '10.0.0.9'), lookup('e5', 12, 'eve'), lookup('e6', 13, 'eve')])
      .thenAccepts((events) => {
        const raised = ofType(events, 'AlertRaised').filter((r) => r['ruleId'] === C);
        assert.deepEqual(raised.map((r) => r['groupKey']), ['{"user":"eve"}']);
        const grown = ofType(events, 'AlertEvidenceAdded').filter((g) => g['alertId'] === first!.id);
        assert.equal(grown.length, 1);
        assert.ok((grown[0]!['suppressed'] as number) >= 1);
      });
    const after1 = accepted.models.alerts.alerts.get(first!.id)!;
    assert.equal(after1.matchCount, 1 + after1.suppressedCount!);
  });

  it('raises a new alert for a fire after the window', () => {
    const { given } = after([rulesImported(correlation('{by: [user], for: 30m}'))], [lookup('e1', 0), lookup('e2', 1)]);
    detection.given(given).when([lookup('e3', 45, 'bob', '10.0.0.9'), lookup('e4', 46, 'bob', '10.0.0.9')]).thenAccepts((events) => {
      const raised = ofType(events, 'AlertRaised').filter((r) => r['ruleId'] === C);
      assert.equal(raised.length, 1);
      assert.equal((raised[0]!['suppression'] as { until: string }).until, '2026-11-22T11:16:00.000Z');
    });
  });
});

type SetCommand = { ruleId: string; by?: string[]; for?: string; reason: string };
const setSuppression = spec((m, c: SetCommand) => {
  const { ruleId, ...body } = c;
  return decideSetRuleSuppression(m.detection, ruleId, body, { ...CTX, actor: ACTOR });
});

describe('setting a rule\'s suppression through the API', () => {
  it('records RuleSuppressionSet with the principal, and overrides the document\'s own', () => {
    const accepted = setSuppression
      .given([rulesImported(rule('{by: [user], for: 30m}'))])
      .when({ ruleId: A, by: ['src'], for: '2h', reason: 'scanner noise, CHG-123' })
      .then([{
        type: 'RuleSuppressionSet',
        data: {
          ruleId: A, suppress: { by: ['src'], for: '2h', forMs: 7_200_000 }, reason: 'scanner noise, CHG-123',
          principal: 'pr_admin', authentication: 'token',
        },
      }]);
    const rule1 = accepted.models.detection.rules.get(A)!;
    assert.deepEqual(effectiveSuppression(rule1), {
      source: 'api', by: ['src'], for: '2h', forMs: 7_200_000, reason: 'scanner noise, CHG-123', principal: 'pr_admin', at: '2026-11-22T10:00:00.000Z',
    });
  });

  it('clears back to the document\'s own suppression, and keeps the setting across a new version of the rule', () => {
    const set = { type: 'RuleSuppressionSet', data: { ruleId: A, suppress: { by: ['src'], for: '2h', forMs: 7_200_000 }, reason: 'r', principal: 'p', authentication: 'token' } };
    const models = memoryModels();
    models.append([rulesImported(rule('{by: [user], for: 30m}')), set, rulesImported(rule('{by: [user], for: 45m}'))]);
    assert.equal(effectiveSuppression(models.detection.rules.get(A)!)?.source, 'api');
    const accepted = setSuppression
      .given([rulesImported(rule('{by: [user], for: 30m}')), set])
      .when({ ruleId: A, reason: 'ticket closed' })
      .then([{ type: 'RuleSuppressionSet', data: { ruleId: A, reason: 'ticket closed', principal: 'pr_admin', authentication: 'token' } }], {
        id: A, suppression: { source: 'rule', by: ['user'], for: '30m', forMs: 1_800_000 },
      });
    assert.equal(accepted.models.detection.rules.get(A)!.suppressOverride, undefined);
  });

  it('refuses an unknown rule, a clear with nothing set, a bad window, and a correlation field outside its group-by', () => {
    setSuppression.given([]).when({ ruleId: A, by: ['user'], for: '1h', reason: 'r' }).thenRejects('not_found', /not installed/);
    setSuppression.given([rulesImported(rule())]).when({ ruleId: A, reason: 'r' }).thenRejects('not_found', /no suppression set/);
    setSuppression.given([rulesImported(rule())]).when({ ruleId: A, by: ['user'], for: '31d', reason: 'r' }).thenRejects('invalid');
    setSuppression.given([rulesImported(rule())]).when({ ruleId: A, by: ['user'], for: '1 hour', reason: 'r' }).thenRejects('invalid');
    setSuppression.given([rulesImported(correlation())]).when({ ruleId: C, by: ['host'], for: '1h', reason: 'r' }).thenRejects('invalid');
  });

  it('takes effect on the next matches', () => {
    const set = { type: 'RuleSuppressionSet', data: { ruleId: A, suppress: { by: ['user'], for: '1h', forMs: 3_600_000 }, reason: 'r', principal: 'p', authentication: 'token' } };
    detection.given([rulesImported(rule()), set]).when([lookup('e1', 0), lookup('e2', 1, 'bob', '10.0.0.8')]).thenAccepts((events) => {
      const raised = ofType(events, 'AlertRaised');
      assert.equal(raised.length, 1);
      assert.equal(raised[0]!['suppressed'], 1);
    });
  });
});

describe('suppression over random match sequences', () => {
  const matchArb = fc.record({
    minute: fc.integer({ min: 0, max: 600 }),
    user: fc.constantFrom('bob', 'eve', 'mallory'),
    dismiss: fc.boolean(),
  });

  it('puts each match in exactly one alert, and the alerts of one user never overlap in their windows', () => {
    fc.assert(
      fc.property(fc.array(fc.array(matchArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 120 }), (batches, forMinutes) => {
        const models = memoryModels();
        models.append([rulesImported(rule(`{by: [user], for: ${forMinutes}m}`))]);
        const raisedIn = new Map<string, number>();
        const dismissedIn = new Map<string, number>();
        let n = 0;
        batches.forEach((batch, b) => {
          const events = batch.map((m) => lookup(`e${n++}`, m.minute, m.user));
          const decided = detect(models, events);
          assert.ok(decided.ok);
          models.append([eventsIngested(...events), ...decided.events]);
          for (const id of models.alerts.alerts.keys()) if (!raisedIn.has(id)) raisedIn.set(id, b);
          // Now and then an analyst dismisses the newest alert: later matches must not join it.
          const newest = [...models.alerts.alerts.values()].at(-1);
          if (batch[0]!.dismiss && newest && newest.status !== 'dismissed') {
            const r = decideReviewAlert(models.alerts, newest.id, { status: 'dismissed', reason: 'x' }, { ...CTX, actor: ACTOR });
            assert.ok(r.ok);
            models.append(r.events);
            dismissedIn.set(newest.id, b);
          }
        });
        const alerts = [...models.alerts.alerts.values()];
        const evidence = alerts.flatMap((a) => a.evidence.map((e) => e.eventId));
        assert.equal(evidence.length, n, 'every match is in an alert');
        assert.equal(new Set(evidence).size, n, 'no match is in two alerts');
        for (const a of alerts) assert.equal(a.matchCount, a.evidenceCount);
        for (const [i, later] of alerts.entries()) {
          const start = Date.parse(later.suppression!.until) - later.suppression!.forMs;
          for (const earlier of alerts.slice(0, i)) {
            if (earlier.suppression!.values['user'] !== later.suppression!.values['user']) continue;
            // An alert dismissed before the later one was raised takes no matches: only then may they overlap.
            const dismissed = dismissedIn.get(earlier.id);
            if (dismissed !== undefined && dismissed < raisedIn.get(later.id)!) continue;
            assert.ok(Date.parse(earlier.suppression!.until) <= start, `${earlier.id} overlaps ${later.id}`);
          }
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('the alerts fold', () => {
  it('reads AlertRaised and AlertEvidenceAdded records written before suppression as it did', () => {
    const fold = (records: readonly Given[]) => {
      const m = memoryModels();
      m.append(records);
      return m.alerts.alerts;
    };
    const alerts = fold([{ type: 'AlertRaised', data: { alertId: 'alr_1', ruleId: 'r', groupKey: 'ip:1', title: 't', level: 'high', severity: 8, confidence: 0.7, matchReason: { selections: [], fields: [], keywords: [] }, evidence: [], affectedSystems: [], firstSeen: 'a', lastSeen: 'a', tags: [] } }]);
    const a = alerts.get('alr_1')!;
    assert.equal(a.suppression, undefined);
    assert.equal('suppressedCount' in a, false);
    assert.equal(alertsProjection.version, 7);
  });
});
