import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideBulkImport, type RuleFile } from '../../src/commands/bulk-import-rules.js';
import { decideImportRules, decideSetRuleEnabled } from '../../src/commands/import-rules.js';
import { DEFAULT_RULE_LIMITS, type RuleLimits } from '../../src/detection/rule-limits.js';
import { DetectionRecord } from '../../src/events/detection-records.js';
import type { RuleSource } from '../../src/events/detection-records.js';
import { spec } from '../helpers/decider-spec.js';
import { dnsRule, ruleEnabledChanged, rulesImported } from '../helpers/event-fixtures.js';

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

type Import = { text: string; source?: RuleSource; packVersion?: string; limits?: RuleLimits };
const importRules = spec((m, c: Import) => decideImportRules(m.detection, c.text, c.source ?? 'api', c.limits ?? DEFAULT_RULE_LIMITS, c.packVersion));

/** A DNS rule with `n` regular expressions. */
const regexRule = (id: string, n: number) => `title: DNS regexes
id: ${id}
logsource: {product: zeek, service: dns}
detection:
  sel:
    query|re: [${Array.from({ length: n }, (_, i) => `'^a${i}$'`).join(', ')}]
  condition: sel
`;

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
    const line = `${dnsRule(A)}---\n${broken}`.split('\n').findIndex((l) => l.startsWith('detection: {s:')) + 1;
    assert.equal(r.issues![0]!, `document 2, line ${line}: rule "Broken": detection.s: field 'query': unknown modifier 'bogus'`);
  });

  it('stores a valid rule whose logsource no normalizer produces (it waits, blocked, in the plan)', () => {
    const mac = `title: Mac\nid: ${B}\nlogsource: {product: macos, category: process_creation}\ndetection: {s: {Image: /bin/x}, condition: s}\n`;
    importRules.given([]).when({ text: mac }).then([rulesImported(mac)], { ruleIds: [B] });
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

  it('installs a rule at a limit, and nothing when one document is over it, naming the rule, its id and the limit', () => {
    const limits = { ...DEFAULT_RULE_LIMITS, regexesPerRule: 2 };
    importRules.given([]).when({ text: regexRule(B, 2), limits }).then([rulesImported(regexRule(B, 2))], { ruleIds: [B] });
    const r = importRules.given([]).when({ text: `${dnsRule(A)}---\n${regexRule(B, 3)}`, limits }).thenRejects('invalid', /nothing was imported/);
    const line = `${dnsRule(A)}---\n`.split('\n').length;
    assert.deepEqual(r.issues, [`document 2, line ${line}: rule "DNS regexes" (${B}): 3 regular expressions, more than detection.limits.regexesPerRule (2)`]);
  });
});

type Switch = { ruleId: string; enabled: boolean; reason?: string };
const setEnabled = spec((m, c: Switch) => decideSetRuleEnabled(m, c.ruleId, c.enabled, c.reason));

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

const bulk = spec((m, files: RuleFile[]) => decideBulkImport(m.detection, files, 'api', DEFAULT_RULE_LIMITS));

describe('decideBulkImport', () => {
  const mac = `title: Mac\nid: ${B}\nlogsource: {product: macos, category: process_creation}\ndetection: {s: {Image: /bin/x}, condition: s}\n`;
  const broken = 'title: Broken\nlogsource: {product: zeek, service: dns}\ndetection:\n  s:\n    query|bogus: a\n  condition: s\n';

  it('installs every valid rule, counts those waiting for a source by logsource, and lists each refusal with file and line', () => {
    const files = [{ name: 'dns.yml', text: dnsRule(A) }, { name: 'mac/proc.yml', text: mac }, { name: 'broken.yml', text: broken }, { name: 'not-yaml.yml', text: 'a: [' }];
    bulk.given([]).when(files).thenAccepts((events, result) => {
      assert.equal(events.length, 1);
      const data = events[0]!.data as { rules: Array<{ id: string }>; text: string };
      assert.equal(events[0]!.type, DetectionRecord.RulesImported);
      assert.deepEqual(data.rules.map((x) => x.id), [A, B]);
      assert.equal(data.text, `${dnsRule(A).trim()}\n---\n${mac.trim()}`, 'the text of the files that gave rules');
      assert.deepEqual({ ...result, invalid: result.invalid.map((i) => ({ ...i, error: i.error.split(': ')[0] })) }, {
        imported: 2, ruleIds: [A, B], blocked: 1, blockedByLogsource: [{ logsource: '{product: macos, category: process_creation}', rules: 1 }],
        invalid: [
          { file: 'broken.yml', document: 1, line: 4, title: 'Broken', error: 'rule "Broken"' },
          { file: 'not-yaml.yml', error: 'YAML document 1 (line 1)' },
        ],
      });
    });
  });

  it('refuses an import with no valid rule, naming every problem', () => {
    const r = bulk.given([]).when([{ name: 'broken.yml', text: broken }]).thenRejects('invalid', /no valid rule/);
    assert.equal(r.issues?.length, 1);
    assert.match(r.issues![0]!, /^broken\.yml document 1 line 4: rule "Broken"/);
  });

  it('refuses a document over a limit on its own, keeping the rest', () => {
    const limits = { ...DEFAULT_RULE_LIMITS, regexesPerRule: 2 };
    const overLimit = spec((m, files: RuleFile[]) => decideBulkImport(m.detection, files, 'api', limits));
    overLimit.given([]).when([{ name: 'a.yml', text: dnsRule(A) }, { name: 'b.yml', text: regexRule(B, 3) }]).thenAccepts((_events, result) => {
      assert.deepEqual(result.ruleIds, [A]);
      assert.deepEqual(result.invalid, [{ file: 'b.yml', document: 1, line: 1, title: 'DNS regexes', error: `rule "DNS regexes" (${B}): 3 regular expressions, more than detection.limits.regexesPerRule (2)` }]);
    });
  });

  it('refuses a second copy of an id and a correlation whose rules are nowhere, keeping the rest', () => {
    bulk.given([]).when([{ name: 'a.yml', text: dnsRule(A) }, { name: 'a-again.yml', text: dnsRule(A, 'other.example') }, { name: 'c.yml', text: correlation('no_such_rule') }]).thenAccepts((_events, result) => {
      assert.equal(result.imported, 1);
      assert.deepEqual(result.invalid.map((i) => [i.file, i.error]), [
        ['a-again.yml', `rule id ${A} appears twice in the import (first in a.yml)`],
        ['c.yml', `correlation ${C} references no_such_rule, which is neither in this import nor installed`],
      ]);
    });
  });
});
