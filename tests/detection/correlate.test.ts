import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileSigma, type CompiledCorrelation } from '../../src/detection/compile.js';
import { advanceCorrelations, initialCorrelationState, type CorrelationFire, type CorrelationState, type RuleHit } from '../../src/detection/correlate.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { journal, sigmaSample } from './make-event.js';

const T0 = Date.parse('2024-05-01T12:00:00Z');
let n = 0;

/** A hit of `rule` (id, or id and name) at `seconds` after T0 on a journal event with these fields. */
function hit(rule: string | [id: string, name: string], seconds: number, fields: Record<string, unknown>): RuleHit {
  n += 1;
  const [ruleId, ruleName] = typeof rule === 'string' ? [rule, undefined] : rule;
  const event = journal('sshd', 'message', { fields });
  return { ruleId, eventId: `e${n}`, timeMs: T0 + seconds * 1000, event: { ...event, id: `e${n}` }, ...(ruleName ? { ruleName } : {}) };
}

function correlationsIn(file: string): CompiledCorrelation[] {
  const parsed = parseSigmaText(sigmaSample('correlation-examples', file));
  assert.ok(parsed.ok);
  return parsed.docs.map((d) => compileSigma(d)).flatMap((c) => (c.ok && c.rule.kind === 'correlation' ? [c.rule] : []));
}

function correlation(text: string): CompiledCorrelation {
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok);
  const compiled = compileSigma(parsed.docs[0]);
  assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
  return compiled.rule as CompiledCorrelation;
}

/** Feeds hits one call at a time; returns, per hit, the fires it caused. */
function run(correlations: CompiledCorrelation[], hits: RuleHit[], start: CorrelationState = initialCorrelationState()): { fires: CorrelationFire[][]; state: CorrelationState } {
  let state = start;
  const fires: CorrelationFire[][] = [];
  for (const h of hits) {
    const next = advanceCorrelations(state, correlations, [h]);
    fires.push(next.fired);
    state = next.state;
  }
  return { fires, state };
}

const firedAt = (fires: CorrelationFire[][], id: string): number[] => fires.flatMap((f, i) => (f.some((x) => x.correlationId === id) ? [i] : []));

const BASE_RULE = '5638f7c0-ac70-491d-8465-2a65075e0d86';

describe('event_count (event_count.yml: gte 100 per ComputerName in 1h)', () => {
  const [rule] = correlationsIn('event_count.yml');

  it('fires at the 100th hit, not again at the 101st', () => {
    const hits = Array.from({ length: 101 }, (_, i) => hit(BASE_RULE, i, { ComputerName: 'srv1' }));
    const { fires } = run([rule!], hits);
    assert.deepEqual(firedAt(fires, rule!.id), [99]);
    const fire = fires[99]![0]!;
    assert.equal(fire.value, 100);
    assert.equal(fire.eventIds.length, 100);
    assert.deepEqual(fire.groupValues, { ComputerName: 'srv1' });
    assert.equal(fire.groupKey, '{"ComputerName":"srv1"}');
    assert.equal(fire.firstMs, T0);
    assert.equal(fire.lastMs, T0 + 99_000);
  });

  it('counts each group separately and ignores hits without the group-by field or of other rules', () => {
    const hits = Array.from({ length: 150 }, (_, i) => hit(BASE_RULE, i, { ComputerName: i % 2 === 0 ? 'a' : 'b' }));
    hits.push(hit(BASE_RULE, 200, {}), hit('other-rule', 201, { ComputerName: 'a' }));
    assert.deepEqual(firedAt(run([rule!], hits).fires, rule!.id), []);
  });

  it('lets hits leave the window, and fires again after the count dropped below the threshold', () => {
    const spread = Array.from({ length: 120 }, (_, i) => hit(BASE_RULE, i * 40, { ComputerName: 'srv1' }));
    assert.deepEqual(firedAt(run([rule!], spread).fires, rule!.id), [], '90 hits per hour at most');
    const burst = (offset: number): RuleHit[] => Array.from({ length: 100 }, (_, i) => hit(BASE_RULE, offset + i, { ComputerName: 'srv1' }));
    const { fires } = run([rule!], [...burst(0), ...burst(7200)]);
    assert.deepEqual(firedAt(fires, rule!.id), [99, 199]);
  });
});

describe('the correlation examples', () => {
  it('all compile, the Windows base rules included (product windows, service security)', () => {
    const files = ['event_count.yml', 'value_count.yml', 'temporal.yml', 'temporal_ordered.yml', 'failed_logins_then_success_multidoc.yml', 'constructed_linux_sshd_bruteforce_then_success.yml'];
    const errors: string[] = [];
    let compiled = 0;
    for (const file of files) {
      const parsed = parseSigmaText(sigmaSample('correlation-examples', file));
      assert.ok(parsed.ok);
      for (const doc of parsed.docs) {
        const result = compileSigma(doc);
        if (result.ok) compiled += 1;
        else errors.push(result.error);
      }
    }
    assert.equal(compiled, 13);
    assert.deepEqual(errors, []);
  });
});

describe('value_count (value_count.yml: 100 distinct User per ComputerName and WorkstationName in 1d)', () => {
  const [rule] = correlationsIn('value_count.yml');

  it('fires at the 100th distinct user of one group and keeps groups apart', () => {
    const hits = Array.from({ length: 100 }, (_, i) => hit(BASE_RULE, i, { ComputerName: 'dc1', WorkstationName: 'ws1', User: `user${i}` }));
    assert.deepEqual(firedAt(run([rule!], hits).fires, rule!.id), [99]);
    const split = Array.from({ length: 100 }, (_, i) => hit(BASE_RULE, i, { ComputerName: 'dc1', WorkstationName: i % 2 ? 'ws1' : 'ws2', User: `user${i}` }));
    assert.deepEqual(firedAt(run([rule!], split).fires, rule!.id), []);
  });
});

describe('value_count (constructed: 10 distinct users per src_ip in 1h)', () => {
  const rule = correlationsIn('constructed_linux_sshd_bruteforce_then_success.yml').find((c) => c.type === 'value_count')!;

  it('counts distinct values, not hits', () => {
    const users = ['a', 'b', 'a', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'c', 'j', 'k'];
    const hits = users.map((user, i) => hit(['00000000-0000-4000-8000-000000000003', 'sshd_failed_password'], i, { src_ip: '203.0.113.5', user }));
    const { fires } = run([rule], hits);
    assert.deepEqual(firedAt(fires, rule.id), [11]);
    assert.equal(fires[11]![0]!.value, 10);
  });

  it('ignores hits without the counted field', () => {
    const hits = Array.from({ length: 12 }, (_, i) => hit('sshd_failed_password', i, { src_ip: '203.0.113.5' }));
    assert.deepEqual(firedAt(run([rule], hits).fires, rule.id), []);
  });
});

describe('temporal and temporal_ordered (recon_cmd_a, _b, _c per ComputerName and User in 5m)', () => {
  const [temporal] = correlationsIn('temporal.yml');
  const [ordered] = correlationsIn('temporal_ordered.yml');
  const who = { ComputerName: 'ws1', User: 'alice' };
  const seq = (names: string[], step = 10, fields: Record<string, unknown> = who): RuleHit[] => names.map((name, i) => hit([`id-${name}`, name], i * step, fields));

  it('temporal fires when all rules matched in any order within the window', () => {
    assert.deepEqual(firedAt(run([temporal!], seq(['recon_cmd_c', 'recon_cmd_a', 'recon_cmd_b'])).fires, temporal!.id), [2]);
    assert.deepEqual(firedAt(run([temporal!], seq(['recon_cmd_a', 'recon_cmd_a', 'recon_cmd_b'])).fires, temporal!.id), []);
    assert.deepEqual(firedAt(run([temporal!], seq(['recon_cmd_a', 'recon_cmd_b', 'recon_cmd_c'], 200)).fires, temporal!.id), [], 'a left the window');
  });

  it('temporal keeps groups apart', () => {
    const hits = [...seq(['recon_cmd_a', 'recon_cmd_b']), ...seq(['recon_cmd_c'], 10, { ComputerName: 'ws1', User: 'bob' })];
    assert.deepEqual(firedAt(run([temporal!], hits).fires, temporal!.id), []);
  });

  it('temporal_ordered fires only in the listed order', () => {
    assert.deepEqual(firedAt(run([ordered!], seq(['recon_cmd_a', 'recon_cmd_b', 'recon_cmd_c'])).fires, ordered!.id), [2]);
    assert.deepEqual(firedAt(run([ordered!], seq(['recon_cmd_c', 'recon_cmd_b', 'recon_cmd_a'])).fires, ordered!.id), []);
    assert.deepEqual(firedAt(run([ordered!], seq(['recon_cmd_a', 'recon_cmd_c', 'recon_cmd_b'])).fires, ordered!.id), []);
    assert.deepEqual(firedAt(run([ordered!], seq(['recon_cmd_a', 'recon_cmd_c', 'recon_cmd_b', 'recon_cmd_c'])).fires, ordered!.id), [3]);
  });

  it('orders hits by event time, so a late hit still completes a chain', () => {
    const [a, b, c] = seq(['recon_cmd_a', 'recon_cmd_b', 'recon_cmd_c']);
    assert.deepEqual(firedAt(run([ordered!], [a!, c!, b!]).fires, ordered!.id), [2]);
  });
});

describe('chained correlations (constructed sshd brute force then success)', () => {
  const all = correlationsIn('constructed_linux_sshd_bruteforce_then_success.yml');
  const outer = all.find((c) => c.type === 'temporal_ordered')!;
  const inner = all.find((c) => c.type === 'event_count')!;
  const failed = (s: number, ip = '203.0.113.5'): RuleHit => hit(['00000000-0000-4000-8000-000000000003', 'sshd_failed_password'], s, { src_ip: ip, user: 'root' });
  const accepted = (s: number, ip = '203.0.113.5'): RuleHit => hit(['00000000-0000-4000-8000-000000000004', 'sshd_accepted'], s, { src_ip: ip, user: 'root' });

  it('fires the event_count at the 5th failure and the outer rule when a login follows', () => {
    const hits = [failed(0), failed(10), failed(20), failed(30), failed(40), failed(50), accepted(60)];
    const { fires } = run(all, hits);
    assert.deepEqual(firedAt(fires, inner.id), [4]);
    assert.deepEqual(firedAt(fires, outer.id), [6]);
    const fire = fires[6]!.find((f) => f.correlationId === outer.id)!;
    assert.deepEqual(fire.groupValues, { src_ip: '203.0.113.5' });
    assert.equal(fire.eventIds.length, 6, 'the five failures behind the chained hit, and the login');
    assert.equal(fire.eventIds.at(-1), hits[6]!.eventId);
    assert.equal(fire.lastMs - fire.firstMs, 20_000, 'from the 5th failure (the chained hit) to the login');
  });

  it('needs the same source, the failures first, and the login within the window', () => {
    const fails = [failed(0), failed(10), failed(20), failed(30), failed(40)];
    assert.deepEqual(firedAt(run(all, [...fails, accepted(60, '198.51.100.1')]).fires, outer.id), []);
    assert.deepEqual(firedAt(run(all, [accepted(0), failed(1), failed(2), failed(3), failed(4), failed(5)]).fires, outer.id), []);
    assert.deepEqual(firedAt(run(all, [...fails, accepted(40 + 11 * 60)]).fires, outer.id), []);
  });

  it('keeps feeding the outer rule while a burst lasts, so a late success is still caught', () => {
    const burst = Array.from({ length: 60 }, (_, i) => failed(i * 20));
    const { fires } = run(all, [...burst, accepted(60 * 20)]);
    assert.deepEqual(firedAt(fires, inner.id), [4]);
    assert.deepEqual(firedAt(fires, outer.id), [60]);
  });
});

describe('aliases and state handling', () => {
  const aliased = correlation([
    'title: Same address both ways', 'correlation:', '  type: temporal', '  rules: [conn_out, conn_in]', '  group-by: [ip]', '  timespan: 1m',
    '  aliases:', '    ip:', '      conn_out: dst_ip', '      conn_in: src_ip',
  ].join('\n'));

  it('resolves group-by aliases per referenced rule', () => {
    const hits = [hit(['o', 'conn_out'], 0, { dst_ip: '192.0.2.1', src_ip: '10.0.0.1' }), hit(['i', 'conn_in'], 5, { src_ip: '192.0.2.1', dst_ip: '10.0.0.1' })];
    const { fires } = run([aliased], hits);
    assert.deepEqual(fires[1]!.map((f) => f.groupValues), [{ ip: '192.0.2.1' }]);
  });

  it('ignores hits older than the lateness allowance and drops idle groups', () => {
    const rule = correlation('title: Count\ncorrelation:\n  type: event_count\n  rules: [r]\n  group-by: [h]\n  timespan: 1m\n  condition: {gte: 2}\n');
    const { fires, state } = run([rule], [hit('r', 7200, { h: 'a' }), hit('r', 0, { h: 'b' }), hit('r', 1, { h: 'b' }), hit('r', 7201, { h: 'c' })]);
    assert.deepEqual(firedAt(fires, rule.id), []);
    assert.deepEqual(Object.keys(state.correlations[rule.id]!.groups).sort(), ['{"h":"a"}', '{"h":"c"}']);
  });

  it('does not modify the state it is given', () => {
    const rule = correlationsIn('temporal.yml')[0]!;
    const first = run([rule], [hit(['x', 'recon_cmd_a'], 0, { ComputerName: 'w', User: 'u' })]).state;
    const frozen = JSON.stringify(first);
    advanceCorrelations(first, [rule], [hit(['y', 'recon_cmd_b'], 1, { ComputerName: 'w', User: 'u' })]);
    assert.equal(JSON.stringify(first), frozen);
  });

  it('starts a correlation afresh when its definition changes, and forgets removed ones', () => {
    const v1 = correlation('title: C\nid: c1\ncorrelation:\n  type: event_count\n  rules: [r]\n  group-by: [h]\n  timespan: 1h\n  condition: {gte: 2}\n');
    const v2 = correlation('title: C\nid: c1\ncorrelation:\n  type: event_count\n  rules: [r]\n  group-by: [h]\n  timespan: 1h\n  condition: {gte: 3}\n');
    const { state } = run([v1], [hit('r', 0, { h: 'a' })]);
    const next = advanceCorrelations(state, [v2], [hit('r', 1, { h: 'a' }), hit('r', 2, { h: 'a' })]);
    assert.deepEqual(next.fired, [], 'the hit counted under v1 is not carried into v2');
    assert.deepEqual(advanceCorrelations(state, [], []).state.correlations, {});
  });
});
