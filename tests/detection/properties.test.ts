import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileSigma, type CompiledCorrelation } from '../../src/detection/compile.js';
import { advanceCorrelations, CORRELATION_STATE_LIMITS, initialCorrelationState, latenessMs, type CorrelationFire, type CorrelationState, type RuleHit } from '../../src/detection/correlate.js';
import { WINDOW_LIMITS } from '../../src/detection/correlation-window.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { collector, journal, sigmaSample, syslog, zeek } from './make-event.js';

const events = [
  journal('sshd', 'Failed password for root from 203.0.113.5 port 22 ssh2', { fields: { src_ip: '203.0.113.5', user: 'root' } }),
  syslog('sudo', 'alice : TTY=pts/0 ; USER=root ; COMMAND=/bin/sh', { fields: { USER: 'root' } }),
  zeek('dns', { query: 'a.example', Z: 1, answers: ['192.0.2.1'], 'id.orig_h': '10.0.0.1' }),
  collector('process_creation', { Image: '/usr/bin/cat', CommandLine: 'cat /etc/sudoers' }),
];

const fieldName = fc.constantFrom('f', 'query', 'Image', 'CommandLine', 'USER', 'id.orig_h', 'src_ip', 'actor.user', '', 'constructor', '__proto__');
const modifier = fc.constantFrom('contains', 'startswith', 'endswith', 'all', 're', 'i', 'cidr', 'exists', 'gt', 'lte', 'neq', 'base64', 'base64offset', 'windash', 'fieldref', 'cased', 'wide', 'expand', 'bogus');
const fieldKey = fc.tuple(fieldName, fc.array(modifier, { maxLength: 3 })).map(([f, m]) => [f, ...m].join('|'));
const scalar = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null), fc.constantFrom('10.0.0.0/8', '*a?\\*', '(', '^x$'));
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }));
const selection = fc.oneof(fc.dictionary(fieldKey, value, { maxKeys: 4 }), fc.array(fc.dictionary(fieldKey, value, { maxKeys: 3 }), { maxLength: 3 }), fc.array(scalar, { maxLength: 4 }));
const conditionToken = fc.constantFrom('sel', 'filter', '_x', 'sel*', 'and', 'or', 'not', '(', ')', '1', 'all', 'of', 'them', '|');
const condition = fc.oneof(fc.constantFrom('sel', 'sel and not filter', '1 of them', 'all of sel*'), fc.array(conditionToken, { maxLength: 10 }).map((t) => t.join(' ')), fc.jsonValue({ maxDepth: 1 }));
const logsource = fc.record({
  product: fc.constantFrom('linux', 'zeek', 'windows', 'tailscale', 'vigil', undefined, 7),
  service: fc.constantFrom('sshd', 'dns', 'auth', 'api', undefined),
  category: fc.constantFrom('process_creation', 'dns', 'firewall', undefined),
}, { requiredKeys: [] });
const plausibleRule = fc.record({
  title: fc.oneof(fc.constant('Rule'), fc.string({ maxLength: 5 }), fc.integer()),
  id: fc.oneof(fc.uuid(), fc.constant(undefined)),
  level: fc.constantFrom('low', 'high', 'severe', undefined),
  logsource,
  detection: fc.record({ sel: selection, filter: selection, _x: selection, condition }, { requiredKeys: ['condition'] }),
}, { requiredKeys: ['title', 'logsource', 'detection'] });
const plausibleCorrelation = fc.record({
  title: fc.constant('Correlation'),
  correlation: fc.record({
    type: fc.constantFrom('event_count', 'value_count', 'temporal', 'temporal_ordered', 'value_sum', 3),
    rules: fc.oneof(fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 4 }), fc.string()),
    'group-by': fc.oneof(fc.array(fc.constantFrom('host', 'user'), { maxLength: 2 }), fc.jsonValue({ maxDepth: 1 })),
    timespan: fc.constantFrom('5m', '1h', '0s', '10x', 5),
    condition: fc.oneof(fc.dictionary(fc.constantFrom('gt', 'gte', 'lt', 'eq', 'field', 'bad'), fc.oneof(fc.integer({ min: -2, max: 2000 }), fc.string())), fc.string()),
    aliases: fc.jsonValue({ maxDepth: 2 }),
    generate: fc.oneof(fc.boolean(), fc.string()),
  }, { requiredKeys: [] }),
});

describe('compileSigma on arbitrary documents', () => {
  it('never throws on arbitrary JSON', () => {
    fc.assert(fc.property(fc.jsonValue(), (doc) => {
      const result = compileSigma(doc);
      assert.equal(typeof result.ok, 'boolean');
    }), { numRuns: 2000 });
  });

  it('never throws on plausible rules, and what compiles never throws on events', () => {
    fc.assert(fc.property(fc.oneof(plausibleRule, plausibleCorrelation), (doc) => {
      const result = compileSigma(doc);
      if (!result.ok) {
        assert.ok(result.error.length > 0);
        return;
      }
      if (result.rule.kind === 'detection') for (const event of events) result.rule.match(event);
    }), { numRuns: 3000 });
  });
});

describe('advanceCorrelations on random hit sequences', () => {
  const compiled = (file: string): CompiledCorrelation[] => {
    const parsed = parseSigmaText(sigmaSample('correlation-examples', file));
    assert.ok(parsed.ok);
    return parsed.docs.map((d) => compileSigma(d)).flatMap((c) => (c.ok && c.rule.kind === 'correlation' ? [c.rule] : []));
  };
  const correlations = [...compiled('constructed_linux_sshd_bruteforce_then_success.yml'), ...compiled('temporal.yml'), ...compiled('temporal_ordered.yml')];
  const ruleRefs: Array<[string, string]> = [
    ['00000000-0000-4000-8000-000000000003', 'sshd_failed_password'], ['00000000-0000-4000-8000-000000000004', 'sshd_accepted'],
    ['ra', 'recon_cmd_a'], ['rb', 'recon_cmd_b'], ['rc', 'recon_cmd_c'],
  ];
  const T0 = Date.parse('2024-05-01T12:00:00Z');
  const hitArb = fc.record({
    rule: fc.integer({ min: 0, max: ruleRefs.length - 1 }),
    seconds: fc.integer({ min: 0, max: 4 * 3600 }),
    ip: fc.constantFrom('203.0.113.5', '198.51.100.1', undefined),
    user: fc.constantFrom('root', 'alice', 'bob', 'carol'),
  });
  const toHits = (raw: Array<{ rule: number; seconds: number; ip: string | undefined; user: string }>): RuleHit[] => raw.map((r, i) => {
    const [ruleId, ruleName] = ruleRefs[r.rule]!;
    const fields: Record<string, unknown> = { user: r.user, User: r.user, ComputerName: 'ws1', ...(r.ip ? { src_ip: r.ip } : {}) };
    const event = { ...journal('sshd', 'm', { fields }), id: `e${i}` };
    return { ruleId, ruleName, eventId: event.id, timeMs: T0 + r.seconds * 1000, event };
  });
  const sorted = fc.array(hitArb, { maxLength: 300 }).map((hits) => [...hits].sort((a, b) => a.seconds - b.seconds));

  function checkBounded(state: CorrelationState): void {
    for (const c of correlations) {
      const slot = state.correlations[c.id];
      if (!slot) continue;
      const groups = Object.values(slot.groups);
      assert.ok(groups.length <= CORRELATION_STATE_LIMITS.groups);
      for (const g of groups) {
        assert.ok(g.entries.length <= WINDOW_LIMITS.entries);
        assert.ok(g.newestMs >= slot.newestMs - latenessMs(c) - c.timespanMs, 'an idle group was kept');
        for (const e of g.entries) assert.ok(e.t >= g.newestMs - c.timespanMs && e.t <= g.newestMs, 'entries stay within the window');
      }
    }
  }

  it('is deterministic, keeps state bounded, and state survives a JSON round trip', () => {
    fc.assert(fc.property(fc.oneof(sorted, fc.array(hitArb, { maxLength: 300 })), (raw) => {
      const hits = toHits(raw);
      const first = advanceCorrelations(initialCorrelationState(), correlations, hits);
      const second = advanceCorrelations(initialCorrelationState(), correlations, hits);
      assert.deepEqual(second, first);
      assert.deepEqual(JSON.parse(JSON.stringify(first.state)), first.state);
      checkBounded(first.state);
    }), { numRuns: 300 });
  });

  it('gives the same fires and state whatever the batch boundaries', () => {
    fc.assert(fc.property(fc.array(hitArb, { maxLength: 200 }), fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 20 }), (raw, cuts) => {
      const hits = toHits(raw);
      const whole = advanceCorrelations(initialCorrelationState(), correlations, hits);
      let state = initialCorrelationState();
      const fired: CorrelationFire[] = [];
      let at = 0;
      for (let i = 0; at < hits.length; i++) {
        const size = cuts[i % cuts.length]!;
        const step = advanceCorrelations(JSON.parse(JSON.stringify(state)) as CorrelationState, correlations, hits.slice(at, at + size));
        fired.push(...step.fired);
        state = step.state;
        at += size;
      }
      assert.deepEqual(fired, whole.fired);
      assert.deepEqual(state, whole.state);
    }), { numRuns: 300 });
  });
});
