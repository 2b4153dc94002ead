import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { compileSigma, type CompiledCorrelation } from '../../src/detection/compile.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { ruleDoc } from './rule-helpers.js';

function errorOf(doc: unknown): string {
  const compiled = compileSigma(doc);
  assert.ok(!compiled.ok, 'expected the document to be refused');
  return compiled.error;
}

function compileYaml(text: string): ReturnType<typeof compileSigma> {
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  return compileSigma(parsed.docs[0]);
}

const base = { title: 'Bad rule', id: 'aaaaaaaa-0000-4000-8000-000000000001', logsource: { product: 'linux', service: 'sshd' } };

describe('compileSigma errors', () => {
  it('names the rule and the unknown modifier', () => {
    const error = errorOf({ ...base, detection: { sel: { 'CommandLine|containz': 'x' }, condition: 'sel' } });
    assert.equal(error, `rule "Bad rule": detection.sel: field 'CommandLine': unknown modifier 'containz'`);
  });

  it('names the rule and the bad condition', () => {
    assert.equal(errorOf({ ...base, detection: { sel: ['x'], condition: '(sel or sel' } }), `rule "Bad rule": detection.condition: missing ')'`);
    assert.equal(errorOf({ ...base, detection: { sel: ['x'], condition: 'sel and other' } }), `rule "Bad rule": detection.condition: unknown search identifier 'other'`);
    assert.equal(errorOf({ ...base, detection: { sel: ['x'] } }), `rule "Bad rule": detection: missing condition`);
  });

  it('compiles a rule whose logsource no normalizer produces: no index keys, the reason kept for the plan', () => {
    for (const logsource of [{ product: 'macos', category: 'process_creation' }, { product: 'aws', service: 'cloudtrail' }, { category: 'process_creation' }]) {
      const result = compileSigma({ ...base, logsource, detection: { sel: { EventName: 'x' }, condition: 'sel' } });
      assert.ok(result.ok && result.rule.kind === 'detection', JSON.stringify(logsource));
      assert.deepEqual(result.rule.indexKeys, []);
      assert.match(result.rule.unmapped ?? '', /^unmapped logsource \{/);
    }
    // Invalid Sigma under such a logsource is still refused.
    assert.match(errorOf({ ...base, logsource: { product: 'macos' }, detection: { sel: { 'f|nope': 'x' }, condition: 'sel' } }), /unknown modifier 'nope'/);
  });

  it('names the rule and the unsupported modifier', () => {
    assert.equal(
      errorOf({ ...base, detection: { sel: { 'User|expand': '%admins%' }, condition: 'sel' } }),
      `rule "Bad rule": detection.sel: field 'User': modifier 'expand' is not supported: placeholders need a processing pipeline, which Vigil does not have`,
    );
    assert.match(errorOf({ ...base, detection: { sel: { 'CommandLine|utf16le|contains': 'x' }, condition: 'sel' } }), /^rule "Bad rule": .*'utf16le' is only supported before 'base64'/);
  });

  it('falls back to the id to name an untitled rule', () => {
    assert.equal(errorOf({ id: 'rule-7', logsource: base.logsource, detection: { sel: ['x'], condition: 'sel' } }), 'rule rule-7: missing title');
    assert.equal(errorOf({ detection: {} }), 'untitled rule: missing title');
    assert.equal(errorOf('title: x'), 'Sigma document: expected a map');
  });

  it('refuses missing parts, wrong shapes and unsupported documents', () => {
    assert.match(errorOf({ title: 'T', logsource: base.logsource }), /missing detection/);
    assert.match(errorOf({ title: 'T', detection: { sel: ['x'], condition: 'sel' } }), /missing logsource/);
    assert.match(errorOf({ ...base, level: 'severe', detection: { sel: ['x'], condition: 'sel' } }), /level: expected one of informational/);
    assert.match(errorOf({ ...base, detection: { sel: [], condition: 'sel' } }), /detection.sel: expected a map/);
    assert.match(errorOf({ ...base, detection: { sel: [{ a: 1 }, 'x'], condition: 'sel' } }), /keywords must be strings or numbers/);
    assert.match(errorOf({ ...base, detection: { sel: { '|re': 'x' }, condition: 'sel' } }), /the only keyword modifier is '\|all'/);
    assert.match(errorOf({ title: 'F', filter: { rules: [] } }), /filter documents are not supported/);
    assert.match(errorOf({ title: 'A', action: 'global' }), /belongs to a rule collection/);
    const cyclic: Record<string, unknown> = { title: 'Loop', logsource: base.logsource, detection: { sel: ['x'], condition: 'sel' } };
    cyclic['self'] = cyclic;
    assert.match(errorOf(cyclic), /^rule "Loop": id: cannot derive an id from a recursive document/);
  });

  it('refuses unsupported correlation features clearly', () => {
    const correlation = (section: Record<string, unknown>): unknown => ({ title: 'C', correlation: { type: 'event_count', rules: ['r'], 'group-by': ['u'], timespan: '5m', condition: { gte: 5 }, ...section } });
    assert.match(errorOf(correlation({ type: 'value_sum' })), /^rule "C": correlation.type: 'value_sum' is not supported/);
    assert.match(errorOf(correlation({ timespan: '5 minutes' })), /correlation.timespan: expected a number followed by s, m, h or d/);
    assert.match(errorOf(correlation({ condition: { lt: 5 } })), /upper bounds alone need end-of-window evaluation/);
    assert.match(errorOf(correlation({ condition: { gte: 5000 } })), /thresholds above 1000 are not supported/);
    assert.match(errorOf(correlation({ type: 'value_count' })), /value_count needs the field/);
    assert.match(errorOf(correlation({ type: 'temporal_ordered', condition: 'a and b' })), /temporal_ordered always requires every rule in order/);
    assert.match(errorOf(correlation({ type: 'temporal', rules: ['a', 'b'], condition: { gte: 3 } })), /asks for 3 distinct rules but only 2/);
    assert.match(errorOf(correlation({ rules: [] })), /correlation.rules: expected 1 to 64 names/);
    assert.match(errorOf({ ...(correlation({}) as object), detection: {} }), /cannot also have logsource or detection/);
  });
});

describe('compileSigma results', () => {
  it('derives a stable id from the document when the rule has none', () => {
    const a = compileSigma(ruleDoc({ sel: { f: 'x' } }));
    const b = compileSigma(ruleDoc({ sel: { f: 'x' } }));
    const c = compileSigma(ruleDoc({ sel: { f: 'y' } }));
    assert.ok(a.ok && b.ok && c.ok);
    assert.match(a.rule.id, /^sigma-[0-9a-f]{32}$/);
    assert.equal(a.rule.id, b.rule.id);
    assert.notEqual(a.rule.id, c.rule.id);
  });

  it('reads the metadata and defaults the level to medium', () => {
    const compiled = compileSigma({ ...ruleDoc({ sel: { f: 'x' } }), references: ['https://example.org'], falsepositives: 'Admins', tags: ['attack.t1000'] });
    assert.ok(compiled.ok);
    assert.equal(compiled.rule.level, 'medium');
    assert.equal(compiled.rule.severity, 5);
    assert.deepEqual(compiled.rule.falsepositives, ['Admins']);
    assert.deepEqual(compiled.rule.references, ['https://example.org']);
  });

  it('compiles a correlation with its defaults', () => {
    const compiled = compileYaml('title: T\nname: t\ncorrelation:\n  type: temporal\n  rules: [a, b]\n  group-by: [host]\n  timespan: 90s\n');
    assert.ok(compiled.ok);
    const rule = compiled.rule as CompiledCorrelation;
    assert.equal(rule.kind, 'correlation');
    assert.deepEqual(rule.condition, { gte: 2 });
    assert.equal(rule.timespanMs, 90_000);
    assert.equal(rule.generate, false);
    assert.equal(rule.name, 't');
  });
});
