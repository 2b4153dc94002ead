import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { alertingStateOf, evaluateEvidence } from '../../src/commands/alerting/evaluate.js';
import { isolatedRules } from '../../src/commands/alerting/isolated-rules.js';
import { createRuleCosts } from '../../src/commands/alerting/rule-costs.js';
import { createRuleRunner, type RunRules } from '../../src/commands/alerting/rule-runner.js';
import { decideSetRuleEnabled } from '../../src/commands/import-rules.js';
import { RULE_QUARANTINED_RULE } from '../../src/commands/system-alerts.js';
import { compileSigma } from '../../src/detection/compile.js';
import { createMeter, resetMeter } from '../../src/detection/engine.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import type { CompiledRule } from '../../src/detection/types.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { activeRuleSet } from '../../src/projections/detection.js';
import { detectionPlan } from '../../src/projections/plan.js';
import { memoryModels, spec } from '../helpers/decider-spec.js';
import { dnsRule, normalizedEvent, rulesImported } from '../helpers/event-fixtures.js';

const A = 'aaaaaaaa-0000-4000-8000-0000000000a1';
const B = 'aaaaaaaa-0000-4000-8000-0000000000b2';
const CTX = { now: '2026-11-22T10:05:00.000Z' };
const SETTINGS = { incidentWindowMs: 3_600_000 };

const dnsEvent = (id: string, query: string): NormalizedEvent =>
  normalizedEvent({ id, source: { adapter: 'network-monitor', instance: 'dns', recordId: id }, attributes: { query } });

/** A runner that runs nothing and reports `ruleId` over its budget. */
const overrunOf = (ruleId: string): RunRules => () => ({
  matches: [],
  hits: [],
  overruns: [{ ruleId, reason: 'took 250 ms on 3 events', budgetMs: 100, measuredMs: 250.4, evaluations: 3, sampleEventId: 'e2' }],
});

/** The models after rule A was imported and then quarantined, and the quarantine's events. */
function quarantinedModels() {
  const models = memoryModels();
  models.append([rulesImported(dnsRule(A))]);
  const out = evaluateEvidence(alertingStateOf(models), [dnsEvent('e1', 'x.example')], CTX, SETTINGS, overrunOf(A));
  models.append(out.events);
  return { models, events: out.events };
}

describe('a rule over its time budget', () => {
  it('is quarantined: a RuleQuarantined record and a vigil.rule-quarantined alert for rule_admins, once', () => {
    const { models, events } = quarantinedModels();
    assert.deepEqual(events.map((e) => e.type), ['RuleQuarantined', 'AlertRaised']);
    const q = events[0]!.data as Record<string, unknown>;
    const alert = events[1]!.data as { alertId: string; ruleId: string; groupKey: string; title: string; tags: string[] };
    assert.deepEqual(q, {
      ruleId: A, reason: 'took 250 ms on 3 events', budgetMs: 100, measuredMs: 250, evaluations: 3, sampleEventId: 'e2', alertId: alert.alertId,
    });
    assert.equal(alert.ruleId, RULE_QUARANTINED_RULE);
    assert.equal(alert.groupKey, A);
    assert.equal(alert.title, 'Rule quarantined: DNS evil.example (250 ms against a budget of 100 ms)');
    assert.deepEqual(alert.tags, ['vigil.self-monitoring', 'vigil.rule-admin']);
    // It stops evaluating, and a second overrun naming it adds nothing.
    assert.equal(activeRuleSet(models.detection).inline.length, 0);
    const again = evaluateEvidence(alertingStateOf(models), [dnsEvent('e3', 'x.example')], CTX, SETTINGS, overrunOf(A));
    assert.deepEqual(again.events, []);
  });

  it('shows quarantined in the plan, with the reason', () => {
    const { models } = quarantinedModels();
    const plan = detectionPlan(models.detection, models.sources, new Date(CTX.now), 24);
    assert.equal(plan.summary.quarantined, 1);
    assert.equal(plan.rules[0]!.state, 'quarantined');
    assert.equal(plan.rules[0]!.quarantine?.reason, 'took 250 ms on 3 events');
  });

  it('stays quarantined when a new version of it is imported', () => {
    const { models } = quarantinedModels();
    models.append([rulesImported(dnsRule(A, 'other.example'))]);
    assert.equal(models.detection.rules.get(A)!.quarantine?.reason, 'took 250 ms on 3 events');
  });
});

type Switch = { ruleId: string; enabled: boolean; reason?: string };
const setEnabled = spec((m, c: Switch) => decideSetRuleEnabled(m, c.ruleId, c.enabled, c.reason));

describe('enabling a quarantined rule again', () => {
  it('needs a reason', () => {
    const { events } = quarantinedModels();
    setEnabled.given([rulesImported(dnsRule(A)), ...events]).when({ ruleId: A, enabled: true })
      .thenRejects('invalid', /rule .* is quarantined \(took 250 ms on 3 events\); enabling it again needs a reason/);
  });

  it('lifts the quarantine with the reason recorded, and dismisses its alert', () => {
    const { events } = quarantinedModels();
    const alertId = (events[1]!.data as { alertId: string }).alertId;
    const accepted = setEnabled.given([rulesImported(dnsRule(A)), ...events])
      .when({ ruleId: A, enabled: true, reason: 'rewritten without the lookahead' })
      .then([
        { type: 'RuleEnabledChanged', data: { ruleId: A, enabled: true, reason: 'rewritten without the lookahead' } },
        {
          type: 'AlertReviewed',
          data: {
            alertId, from: 'open', to: 'dismissed', reason: 'quarantine lifted: rewritten without the lookahead',
            principal: RULE_QUARANTINED_RULE, authentication: 'system',
          },
        },
      ], { id: A, enabled: true });
    assert.equal(accepted.models.detection.rules.get(A)!.quarantine, undefined);
    assert.equal(activeRuleSet(accepted.models.detection).inline.length, 1);
  });

  it('is not what disabling does: the quarantine stays on record', () => {
    const { events } = quarantinedModels();
    const accepted = setEnabled.given([rulesImported(dnsRule(A)), ...events]).when({ ruleId: A, enabled: false })
      .then([{ type: 'RuleEnabledChanged', data: { ruleId: A, enabled: false } }], { id: A, enabled: false });
    assert.ok(accepted.models.detection.rules.get(A)!.quarantine);
  });
});

describe('the rule runner', () => {
  it('counts each rule\'s evaluations, matches and time, and reports a rule over its budget', () => {
    const models = memoryModels();
    models.append([rulesImported(dnsRule(A)), rulesImported(dnsRule(B, 'other.example'))]);
    const costs = createRuleCosts();
    const events = [dnsEvent('e1', 'evil.example'), dnsEvent('e2', 'x.example'), dnsEvent('e3', 'other.example')];
    const generous = createRuleRunner({ batchMs: 60_000, eventMicros: 1_000_000 }, costs)(models.detection, events);
    assert.deepEqual(generous.overruns, []);
    assert.deepEqual(generous.matches.map((m) => [m.ruleId, m.eventIds[0]]), [[A, 'e1'], [B, 'e3']]);
    assert.equal(costs.of(A)!.matches, 1);
    assert.equal(costs.of(B)!.matches, 1);
    assert.ok(costs.of(A)!.evaluations >= 1 && costs.of(A)!.ms >= 0);
    // With no time to spend, every rule that ran is over its budget; its matches of the batch still count.
    const none = createRuleRunner({ batchMs: 0, eventMicros: 0 }, createRuleCosts())(models.detection, events);
    assert.equal(none.matches.length, 2);
    assert.deepEqual(none.overruns.map((o) => o.ruleId).sort(), [A, B]);
    for (const o of none.overruns) {
      assert.match(o.reason, /^took \d+ ms on \d+ events? \(budget 0 ms: 0 ms a batch or 0 µs an event\), \d+ ms on its slowest event$/);
      assert.ok(['e1', 'e2', 'e3'].includes(o.sampleEventId!));
    }
  });
});

describe('a rule meter', () => {
  it('counts every evaluation; when not exact it times one in eight and names an event whose rules were slow', () => {
    const models = memoryModels();
    models.append([rulesImported(dnsRule(A)), rulesImported(dnsRule(B, 'other.example'))]);
    const set = activeRuleSet(models.detection);
    const events = Array.from({ length: 40 }, (_, n) => dnsEvent(`e${n}`, n % 2 ? 'evil.example' : 'other.example'));
    const sampled = createMeter(set.inline.length, false, 1e9);
    set.matchEvents(events, sampled);
    assert.deepEqual([...sampled.evaluations], [20, 20]);
    assert.deepEqual([...sampled.matches], [20, 20]);
    assert.equal(sampled.slowEvent, undefined, 'no event took a billion ms');
    const touchy = createMeter(set.inline.length, false, 0);
    set.matchEvents(events, touchy);
    assert.equal(touchy.slowEvent, 'e0', 'the first event over 0 ms');
    const exact = createMeter(set.inline.length, true, 0);
    set.matchEvents(events, exact);
    assert.equal(exact.slowEvent, undefined, 'an exact meter times rules, not events');
    assert.ok(exact.slowestEvent.every((id) => id !== undefined));
    resetMeter(exact);
    assert.deepEqual([...exact.evaluations, ...exact.matches, ...exact.ms], [0, 0, 0, 0, 0, 0]);
  });
});

const httpRule = (id: string, title: string, pattern: string) => `title: ${title}
id: ${id}
logsource: {product: zeek, service: http}
detection: {sel: {uri|re: '${pattern}'}, condition: sel}
level: low
`;

function isolated(text: string): { rule: CompiledRule; doc: unknown } {
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok);
  const doc = parsed.docs[0];
  const compiled = compileSigma(doc);
  assert.ok(compiled.ok && compiled.rule.kind === 'detection');
  assert.equal(compiled.rule.backtracks, true, 'needs the backtracking engine');
  return { rule: compiled.rule, doc };
}

const httpEvent = (id: string, uri: string): NormalizedEvent =>
  normalizedEvent({ id, source: { adapter: 'network-monitor', instance: 'http', recordId: id }, attributes: { uri } });

describe('rules with lookarounds or back-references', () => {
  it('are set aside from the request thread\'s rule set; linear-time ones are not', () => {
    const models = memoryModels();
    models.append([
      rulesImported(httpRule(A, 'Hostile', '^(?!b)(a+)+$')),
      rulesImported(httpRule(B, 'Plain', '^/admin/[a-z]+$')),
    ]);
    const set = activeRuleSet(models.detection);
    assert.deepEqual(set.inline.map((r) => r.id), [B]);
    assert.deepEqual(set.isolated.map((r) => r.id), [A]);
  });

  it('run in a worker: one past its budget is stopped and reported, the others\' matches still come', () => {
    const hostile = isolated(httpRule(A, 'Hostile', '^(?!b)(a+)+$'));
    const login = isolated(httpRule(B, 'Login', '^/login(?!\\.css)'));
    const rules = isolatedRules([hostile, login]);
    try {
      const events = [httpEvent('e1', '/login'), httpEvent('e2', `${'a'.repeat(29)}!`), httpEvent('e3', '/login.css')];
      const started = performance.now();
      const first = rules.run(events, { batchMs: 100, eventMicros: 1000 });
      const ms = performance.now() - started;
      assert.deepEqual(first.overruns.map((o) => [o.ruleId, o.sampleEventId, o.budgetMs]), [[A, 'e2', 100]]);
      assert.match(first.overruns[0]!.reason, /^still running after \d+ ms on a batch of 3 events \(budget 100 ms\): stopped$/);
      assert.deepEqual(first.found.map((f) => [f.ruleId, f.event.id]), [[B, 'e1']]);
      assert.ok(ms < 20_000, `the batch took ${ms} ms: the hostile rule was not stopped`);
      // The stopped rule is not run again; the others are.
      const second = rules.run(events, { batchMs: 100, eventMicros: 1000 });
      assert.deepEqual(second.overruns, []);
      assert.deepEqual(second.found.map((f) => [f.ruleId, f.event.id]), [[B, 'e1']]);
      assert.deepEqual(second.costs.map((c) => [c.ruleId, c.evaluations, c.matches]), [[B, 3, 1]]);
    } finally {
      rules.close();
    }
  });

  it('are evaluated only on events of their logsource', () => {
    const rules = isolatedRules([isolated(httpRule(A, 'Hostile', '^(?!b)(a+)+$'))]);
    try {
      const dns = rules.run([dnsEvent('d1', `${'a'.repeat(29)}!`)], { batchMs: 100, eventMicros: 1000 });
      assert.deepEqual(dns, { found: [], costs: [], overruns: [] });
    } finally {
      rules.close();
    }
  });
});
