import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { compileSigma, type CompiledCorrelation, type CompiledRule } from '../../src/detection/compile.js';
import { initialCorrelationState } from '../../src/detection/correlate.js';
import { createRuleSet, type RuleMatch } from '../../src/detection/engine.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { at, journal, makeEvent, sigmaSample, zeek } from './make-event.js';

type AnyRule = CompiledRule | CompiledCorrelation;

function compileAll(text: string): AnyRule[] {
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok);
  return parsed.docs.map((d) => compileSigma(d)).flatMap((c) => (c.ok ? [c.rule] : []));
}

function zeekRule(service: string, value: string): CompiledRule {
  const compiled = compileSigma({ title: `r-${service}-${value}`, logsource: { product: 'zeek', service }, detection: { sel: { method: value }, condition: 'sel' } });
  assert.ok(compiled.ok);
  return compiled.rule as CompiledRule;
}

/** Wraps a rule so the test can count how often the engine tries it. */
function counted(rule: CompiledRule, calls: { n: number }): CompiledRule {
  return { ...rule, match: (event: NormalizedEvent) => { calls.n += 1; return rule.match(event); } };
}

const failed = (s: number, ip = '203.0.113.5', user = 'root'): NormalizedEvent =>
  at(journal('sshd', `Failed password for ${user} from ${ip} port 4${s} ssh2`, { category: 'identity', class: 'authentication', outcome: 'failure', fields: { user, src_ip: ip } }), s);
const accepted = (s: number, ip = '203.0.113.5'): NormalizedEvent =>
  at(journal('sshd-session', `Accepted publickey for root from ${ip} port 50000 ssh2`, { category: 'identity', class: 'authentication', outcome: 'success', fields: { user: 'root', src_ip: ip } }), s);

const summary = (matches: RuleMatch[]): string[] => matches.map((m) => `${m.kind}:${m.ruleId}`);

describe('createRuleSet', () => {
  it('tries only the rules that share an index key with the event', () => {
    const calls = { n: 0 };
    const rules = Array.from({ length: 999 }, (_, i) => counted(zeekRule(i % 2 === 0 ? 'http' : `svc${i}`, `M${i}`), calls));
    const dns = counted(zeekRule('dns', 'QUERY'), calls);
    const set = createRuleSet([...rules, dns]);
    set.evaluate(initialCorrelationState(), [zeek('dns', { method: 'QUERY' })]);
    assert.equal(calls.n, 1);
    calls.n = 0;
    set.evaluate(initialCorrelationState(), [zeek('http', { method: 'GET' }), journal('sshd', 'x')]);
    assert.equal(calls.n, 0, 'no http rule can match GET: the prefilter tries none');
    set.evaluate(initialCorrelationState(), [zeek('http', { method: 'M998' })]);
    assert.equal(calls.n, 1, 'only the rule whose literal M998 occurs (M9 and M99 are not http rules)');
  });

  it('always tries a rule the prefilter cannot narrow (a regex, a negation)', () => {
    const calls = { n: 0 };
    const re = compileSigma({ title: 're', logsource: { product: 'zeek', service: 'http' }, detection: { sel: { 'method|re': '^P' }, condition: 'sel' } });
    const not = compileSigma({ title: 'not', logsource: { product: 'zeek', service: 'http' }, detection: { sel: { method: 'GET' }, condition: 'not sel' } });
    assert.ok(re.ok && not.ok);
    const set = createRuleSet([counted(re.rule as CompiledRule, calls), counted(not.rule as CompiledRule, calls)]);
    const { matches } = set.evaluate(initialCorrelationState(), [zeek('http', { method: 'POST' })]);
    assert.equal(calls.n, 2);
    assert.equal(matches.length, 2);
  });

  it('tries a rule once per event even when it shares several keys with it', () => {
    const calls = { n: 0 };
    const compiled = compileSigma({ title: 'Two keys', logsource: { product: 'linux', service: 'sshd' }, detection: { k: ['x'], condition: 'k' } });
    assert.ok(compiled.ok);
    const rule = counted(compiled.rule as CompiledRule, calls);
    const { matches } = createRuleSet([{ ...rule, indexKeys: ['linux', 'linux:prog:sshd'] }]).evaluate(initialCorrelationState(), [journal('sshd', 'x')]);
    assert.equal(calls.n, 1);
    assert.equal(matches.length, 1);
  });

  it('raises a detection match with the event id, time and explanation', () => {
    const rule = zeekRule('http', 'PUT');
    const event = at(zeek('http', { method: 'put' }), 30);
    const { matches } = createRuleSet([rule]).evaluate(initialCorrelationState(), [event]);
    assert.deepEqual(matches.map((m) => [m.kind, m.ruleId, m.eventIds, m.groupKey, m.timeMs]), [['detection', rule.id, [event.id], event.id, Date.parse(event.time)]]);
    assert.deepEqual((matches[0]!.detail as { selections: string[] }).selections, ['sel']);
  });

  it('evaluates rules over Vigil API access events', () => {
    const compiled = compileSigma({
      title: 'Unapproved device used the API', logsource: { product: 'vigil', service: 'api' },
      detection: { sel: { unapproved_device: true, 'status|lt': 400 }, condition: 'sel' },
    });
    assert.ok(compiled.ok);
    const api = (unapproved: boolean): NormalizedEvent => makeEvent({
      adapter: 'vigil', instance: 'api', class: 'api_access', category: 'application',
      attributes: { unapproved_device: unapproved, status: 200, method: 'GET', route: '/api/v1/alerts', source_ip: '192.0.2.9' },
    });
    const set = createRuleSet([compiled.rule]);
    assert.equal(set.evaluate(initialCorrelationState(), [api(true)]).matches.length, 1);
    assert.equal(set.evaluate(initialCorrelationState(), [api(false)]).matches.length, 0);
  });
});

describe('rule sets with correlations', () => {
  const constructed = compileAll(sigmaSample('correlation-examples', 'constructed_linux_sshd_bruteforce_then_success.yml'));
  const outerId = '00000000-0000-4000-8000-000000000001';
  const events = [failed(0), failed(10), failed(20), failed(30), failed(40), accepted(60)];

  it('raises only the outermost correlation: referenced rules without generate stay silent', () => {
    const set = createRuleSet(constructed);
    const { matches } = set.evaluate(initialCorrelationState(), events);
    assert.deepEqual(summary(matches), [`correlation:${outerId}`]);
    assert.deepEqual(matches[0]!.eventIds, [events[0]!.id, events[1]!.id, events[2]!.id, events[3]!.id, events[4]!.id, events[5]!.id]);
    assert.equal(matches[0]!.groupKey, '{"src_ip":"203.0.113.5"}');
    assert.deepEqual(set.unresolved, []);
  });

  it('lets referenced rules raise their own matches when a correlation says generate: true', () => {
    const withGenerate = constructed.map((r) => (r.kind === 'correlation' && r.type === 'event_count' ? { ...r, generate: true } : r));
    const { matches } = createRuleSet(withGenerate).evaluate(initialCorrelationState(), events);
    const failedRule = '00000000-0000-4000-8000-000000000003';
    assert.deepEqual(summary(matches), [...Array(5).fill(`detection:${failedRule}`), `correlation:${outerId}`]);
  });

  it('gives the same matches whether the events come in one batch or many', () => {
    const set = createRuleSet(constructed);
    const whole = set.evaluate(initialCorrelationState(), events);
    let state = initialCorrelationState();
    const pieces: RuleMatch[] = [];
    for (const event of events) {
      const step = set.evaluate(state, [event]);
      state = step.state;
      pieces.push(...step.matches);
    }
    assert.deepEqual(pieces, whole.matches);
    assert.deepEqual(state, whole.state);
  });

  it('reports correlation references that name no rule in the set', () => {
    const rules = compileAll(sigmaSample('correlation-examples', 'failed_logins_then_success_multidoc.yml')).filter((r) => r.kind === 'correlation');
    assert.equal(rules.length, 2, 'the two correlations, without the rules they reference');
    assert.deepEqual(createRuleSet(rules).unresolved, [
      { correlationId: 'b180ead8-d58f-40b2-ae54-c8940995b9b6', reference: 'successful_login' },
      { correlationId: 'a8418a5a-5fc4-46b5-b23b-6c73beb19d41', reference: 'failed_login' },
    ]);
  });
});
