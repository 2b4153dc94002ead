import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideImportRules, decideSetRuleEnabled } from '../../src/commands/import-rules.js';
import type { RuleSource } from '../../src/events/detection-records.js';
import { spec } from '../helpers/decider-spec.js';
import { dnsRule, ruleEnabledChanged, rulesImported } from '../helpers/event-fixtures.js';
import { detectionSlice } from '../../src/commands/slices.js';

const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'aaaaaaaa-0000-4000-8000-000000000002';
const C = 'aaaaaaaa-0000-4000-8000-000000000003';

/** A rule with a name, for correlations to reference. */
const named = `title: DNS to evil
id: ${A}
name: dns_evil
logsource: {product: zeek, service: dns}
detection: {sel: {query: evil.example}, condition: sel}
level: low
`;
const correlation = (ref: string) => `title: Repeated evil DNS
id: ${C}
correlation: {type: event_count, rules: [${ref}], group-by: [id.orig_h], timespan: 5m, condition: {gte: 3}}
level: high
`;

type Import = { text: string; source?: RuleSource; packVersion?: string };
const importRules = spec((m, c: Import) => decideImportRules(detectionSlice(m), c.text, c.source ?? 'api', c.packVersion));

describe('decideImportRules', () => {
  it('installs every document of a multi-document import and keeps the full text', () => {
    const text = `${dnsRule(A)}---\n${dnsRule(B, 'other.example')}`;
    importRules.given([]).when({ text }).then([rulesImported(text)], { ruleIds: [A, B] });
  });

  it('records the version of a built-in pack', () => {
    importRules.given([]).when({ text: dnsRule(A), source: 'builtin', packVersion: 'pack-7' }).then([rulesImported(dnsRule(A), 'pack-7')], { ruleIds: [A] });
  });

  it('replaces an installed rule that has the same id', () => {
    importRules.given([rulesImported(dnsRule(A))]).when({ text: dnsRule(A, 'changed.example') }).then([rulesImported(dnsRule(A, 'changed.example'))]);
  });

  it('refuses text that is not YAML', () => {
    const r = importRules.given([]).when({ text: 'title: [unclosed' }).thenRejects('invalid', /^invalid Sigma YAML$/);
    assert.equal(r.issues?.length, 1);
  });

  it('refuses a body without a rule', () => {
    importRules.given([]).when({ text: '' }).thenRejects('invalid', /no rule in the body/);
  });

  it('installs nothing when one document does not compile, and names that document', () => {
    const broken = 'title: Broken\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query|bogus: a}, condition: s}\n';
    const r = importRules.given([]).when({ text: `${dnsRule(A)}---\n${broken}` }).thenRejects('invalid', /nothing was imported/);
    assert.equal(r.issues?.length, 1);
    assert.match(r.issues![0]!, /^document 2 \(rule "Broken"\): /);
  });

  it('refuses an import that holds the same rule id twice', () => {
    const r = importRules.given([]).when({ text: `${dnsRule(A)}---\n${dnsRule(A, 'other.example')}` }).thenRejects('invalid');
    assert.deepEqual(r.issues, [`rule id ${A} appears twice in the import`]);
  });

  it('accepts a correlation that references a rule installed earlier', () => {
    importRules.given([rulesImported(named)]).when({ text: correlation('dns_evil') }).then([rulesImported(correlation('dns_evil'))], { ruleIds: [C] });
  });

  it('refuses a correlation that references a rule neither in the import nor installed', () => {
    const r = importRules.given([rulesImported(named)]).when({ text: correlation('nothing_here') }).thenRejects('invalid');
    assert.deepEqual(r.issues, [`correlation ${C} references nothing_here, which is neither in this import nor installed`]);
  });
});

type Switch = { ruleId: string; enabled: boolean; reason?: string };
const setEnabled = spec((m, c: Switch) => decideSetRuleEnabled(detectionSlice(m), c.ruleId, c.enabled, c.reason));

describe('decideSetRuleEnabled', () => {
  it('switches an installed rule off, with the reason', () => {
    setEnabled.given([rulesImported(dnsRule(A))]).when({ ruleId: A, enabled: false, reason: 'noisy' })
      .then([ruleEnabledChanged(A, false, 'noisy')], { id: A, enabled: false });
  });

  it('switches a disabled rule back on, without a reason when none is given', () => {
    setEnabled.given([rulesImported(dnsRule(A)), ruleEnabledChanged(A, false)]).when({ ruleId: A, enabled: true })
      .then([ruleEnabledChanged(A, true)], { id: A, enabled: true });
  });

  it('refuses a rule that is not installed as not found', () => {
    setEnabled.given([rulesImported(dnsRule(A))]).when({ ruleId: B, enabled: false }).thenRejects('not_found', new RegExp(`rule ${B} is not installed`));
  });
});
