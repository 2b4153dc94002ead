import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { compileSigma } from '../../src/detection/compile.js';
import { initialCorrelationState } from '../../src/detection/correlate.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import type { DetectionState, InstalledRule } from '../../src/projections/detection.js';
import { attackMatrix, ATTACK_TACTICS } from '../../src/projections/plan-attack.js';
import {
  detectionPlan,
  matchingEntries,
  planPage,
  planSummary,
  type PlanFilter,
} from '../../src/projections/plan.js';
import type { SourcesState } from '../../src/projections/sources.js';
import { importPlanSummary, planLine } from '../../src/cli/rules-commands.js';

/**
 * Issue 59.4: the plan at rule-set scale. Each problem is told apart by a machine-readable `problem`, fixes are
 * grouped by the source they need, the plan pages and filters, and the summary counts what the filter matches.
 */

const NOW = new Date('2026-11-23T12:00:00.000Z');
const FRESH = '2026-11-23T11:00:00.000Z';
const OLD = '2026-11-20T11:00:00.000Z';

function rule(id: string, title: string, body: string, tags: string[] = [], description = ''): InstalledRule {
  const text =
    `title: ${title}\nid: ${id}\n${description ? `description: ${description}\n` : ''}` +
    `${tags.length > 0 ? `tags:\n${tags.map((t) => `  - ${t}`).join('\n')}\n` : ''}${body}`;
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok, text);
  const compiled = compileSigma(parsed.docs[0]);
  assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
  return { id, doc: parsed.docs[0], compiled: compiled.rule, source: 'api', importedAt: FRESH, enabled: true };
}

const WIN_PROC = 'logsource:\n  product: windows\n  category: process_creation\n';
const LINUX_PROC = 'logsource:\n  product: linux\n  category: process_creation\n';
const DETECT = (field: string) => `detection:\n  sel:\n    ${field}|contains: x\n  condition: sel\nlevel: high\n`;

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const RULES: InstalledRule[] = [
  rule(id(1), 'Encoded PowerShell', WIN_PROC + DETECT('CommandLine'), ['attack.execution', 'attack.t1059.001'], 'Finds -enc'),
  rule(id(2), 'Suspicious cmd', WIN_PROC + DETECT('CommandLine'), ['attack.execution', 'attack.T1059']),
  rule(id(3), 'Linux reverse shell', LINUX_PROC + DETECT('CommandLine'), ['attack.execution', 'attack.t1059.004']),
  rule(
    id(4),
    'CloudTrail console login without MFA',
    'logsource:\n  product: aws\n  service: cloudtrail\n' + DETECT('eventName'),
    ['attack.initial-access', 'attack.t1078'],
  ),
  rule(id(5), 'SSH failed password', 'logsource:\n  product: linux\n  service: sshd\n' + DETECT('MESSAGE'), [
    'attack.credential-access',
    'attack.t1110',
  ]),
  rule(id(6), 'SSH odd field', 'logsource:\n  product: linux\n  service: sshd\n' + DETECT('NoSuchField'), [
    'attack.credential-access',
    'attack.t1110.001',
  ]),
  rule(id(7), 'DNS tunnel', 'logsource:\n  category: dns\n' + DETECT('query'), ['attack.command-and-control', 'attack.t1071.004']),
  rule(id(8), 'Slow regex', WIN_PROC + DETECT('Image'), ['attack.execution', 'attack.t1059']),
  rule(id(9), 'Disabled cmd', WIN_PROC + DETECT('Image'), ['attack.execution', 'attack.t1059']),
  rule(id(10), 'Untagged technique', WIN_PROC + DETECT('Image'), ['attack.t1105']),
];
RULES[7]!.quarantine = { reason: 'over its time budget', at: FRESH } as InstalledRule['quarantine'];
RULES[8]!.enabled = false;

const DET: DetectionState = { rules: new Map(RULES.map((r) => [r.id, r])), correlation: initialCorrelationState() };
const seen = (at: string, fields: string[]) => ({ lastIngestedAt: at, lastEventTime: at, events: 10, fields: new Set(fields) });
/** An sshd journal sending, Zeek dns quiet for days, and an enrolled collector agent sending. */
const SOURCES: SourcesState = new Map([
  ['linux:prog:sshd', seen(FRESH, ['MESSAGE', 'SYSLOG_IDENTIFIER'])],
  ['linux', seen(FRESH, ['MESSAGE'])],
  ['zeek:dns', seen(OLD, ['query'])],
  ['vigil:collector', seen(FRESH, [])],
  ['linux:class:host_inventory', seen(FRESH, [])],
]);
const plan = detectionPlan(DET, SOURCES, NOW, 24);
const entry = (n: number) => plan.rules.find((e) => e.ruleId === id(n))!;

describe('the plan tells each problem apart', () => {
  it('gives each entry its state, its worst problem and the source it waits for', () => {
    const got = Object.fromEntries(plan.rules.map((e) => [e.title, [e.state, e.problem, e.needs]]));
    assert.deepEqual(got, {
      'Encoded PowerShell': ['blocked', 'no_source_connected', 'win:cat:process_creation'],
      'Suspicious cmd': ['blocked', 'no_source_connected', 'win:cat:process_creation'],
      'Linux reverse shell': ['blocked', 'logsource_unsupported', 'linux:class:process_creation'],
      'CloudTrail console login without MFA': [
        'blocked',
        'logsource_unsupported',
        'logsource:product=aws,service=cloudtrail',
      ],
      'SSH failed password': ['ready', null, null],
      'SSH odd field': ['degraded', 'fields_never_seen', null],
      'DNS tunnel': ['degraded', 'stale', 'zeek:dns'],
      'Slow regex': ['quarantined', 'quarantined', 'win:cat:process_creation'],
      'Disabled cmd': ['blocked', 'no_source_connected', 'win:cat:process_creation'],
      'Untagged technique': ['blocked', 'no_source_connected', 'win:cat:process_creation'],
    });
    assert.deepEqual(
      entry(6).missingCapabilities.map((m) => [m.capability, m.problem]),
      [['field NoSuchField', 'fields_never_seen']],
    );
    assert.deepEqual(entry(1).tags, ['attack.execution', 'attack.t1059.001']);
    assert.deepEqual(entry(2).tags, ['attack.execution', 'attack.t1059'], 'tags are lower-cased');
  });

  it('a Linux process_creation rule does not say to enroll a collector agent while one is sending, and says what would feed it', () => {
    const page = planPage(plan, { source: 'linux:class:process_creation' }, 50)!;
    assert.deepEqual(page.rules.map((e) => e.ruleId), [id(3)]);
    const fix = page.fixes[0]!;
    assert.equal(fix.problem, 'logsource_unsupported');
    assert.doesNotMatch(fix.action, /^enroll|vigil collector enroll/);
    assert.match(fix.action, /no Vigil collector source produces Linux process executions yet/);
    assert.match(fix.action, /not process executions/);
    assert.match(fix.action, /auditd EXECVE/);
    assert.match(fix.action, /Sysmon through the OpenTelemetry Collector/);
    for (const m of entry(3).missingCapabilities) assert.doesNotMatch(m.fix, /enroll/);
  });

  it('an unmapped logsource is logsource_unsupported and names the logsource; a mapped one nothing sent is no_source_connected', () => {
    assert.match(entry(4).missingCapabilities[0]!.fix, /unmapped logsource \{product: aws, service: cloudtrail\}/);
    assert.equal(plan.guides.get('logsource:product=aws,service=cloudtrail')!.problem, 'logsource_unsupported');
    const windows = plan.guides.get('win:cat:process_creation')!;
    assert.equal(windows.problem, 'no_source_connected');
    assert.match(windows.action, /Sysmon \(event 1\).*Security 4688.*\/api\/v1\/ingest\/opentelemetry-log/);
    assert.equal(windows.doc, 'docs/windows.md');
  });
});

describe('fixes grouped by the source they need', () => {
  it('one line per source with the enabled rules it would unblock, most first; disabled rules do not count', () => {
    const page = planPage(plan, {}, 50)!;
    assert.deepEqual(
      page.fixes.map((f) => [f.source, f.problem, f.rules]),
      [
        ['win:cat:process_creation', 'no_source_connected', 3],
        ['linux:class:process_creation', 'logsource_unsupported', 1],
        ['logsource:product=aws,service=cloudtrail', 'logsource_unsupported', 1],
        ['zeek:dns', 'stale', 1],
      ],
    );
    assert.equal(new Set(page.fixes.map((f) => f.action)).size, page.fixes.length, 'each fix said once');
    for (const f of page.fixes) assert.ok(f.describe.length > 0 && f.doc.startsWith('docs/'), JSON.stringify(f));
  });
});

describe('the summary counts the whole filtered set, not the page', () => {
  it('counts per state (enabled), per problem and per missing source', () => {
    const s = planPage(plan, {}, 1)!.summary;
    assert.deepEqual(
      { rules: s.rules, ready: s.ready, degraded: s.degraded, blocked: s.blocked, quarantined: s.quarantined, disabled: s.disabled },
      { rules: 10, ready: 1, degraded: 2, blocked: 5, quarantined: 1, disabled: 1 },
    );
    assert.deepEqual(s.byProblem, {
      quarantined: 1,
      logsource_unsupported: 2,
      no_source_connected: 3,
      stale: 1,
      fields_never_seen: 1,
    });
    assert.deepEqual(s.byMissingSource, {
      'win:cat:process_creation': 3,
      'linux:class:process_creation': 1,
      'logsource:product=aws,service=cloudtrail': 1,
      'zeek:dns': 1,
    });
    const blocked = planPage(plan, { state: 'blocked' }, 1)!.summary;
    assert.equal(blocked.rules, 6);
    assert.equal(blocked.blocked, 5);
    assert.equal(blocked.disabled, 1);
    assert.deepEqual(plan.summary, { rules: 10, ready: 1, degraded: 2, blocked: 5, quarantined: 1, disabled: 1 });
  });
});

describe('every filter', () => {
  const titles = (f: PlanFilter) => matchingEntries(plan, f).map((e) => e.title);
  it('state', () => {
    assert.deepEqual(titles({ state: 'degraded' }), ['DNS tunnel', 'SSH odd field']);
    assert.deepEqual(titles({ state: 'quarantined' }), ['Slow regex']);
  });
  it('problem: the worst one, or any missing capability of that problem', () => {
    assert.deepEqual(titles({ problem: 'logsource_unsupported' }), ['CloudTrail console login without MFA', 'Linux reverse shell']);
    assert.deepEqual(titles({ problem: 'fields_never_seen' }), ['SSH odd field']);
    assert.deepEqual(titles({ problem: 'quarantined' }), ['Slow regex']);
  });
  it('source: a fix id or a source key it is made of', () => {
    assert.deepEqual(titles({ source: 'zeek:dns' }), ['DNS tunnel']);
    assert.equal(titles({ source: 'win:cat:process_creation' }).length, 5);
    assert.deepEqual(titles({ source: 'logsource:product=aws,service=cloudtrail' }), ['CloudTrail console login without MFA']);
    assert.deepEqual(titles({ source: 'nothing:here' }), []);
  });
  it('tag: exact, case-insensitive, a technique with its sub-techniques', () => {
    assert.deepEqual(titles({ tag: 'attack.t1110' }), ['SSH failed password', 'SSH odd field']);
    assert.deepEqual(titles({ tag: 'ATTACK.T1110.001' }), ['SSH odd field']);
    assert.deepEqual(titles({ tag: 'attack.t1059' }), [
      'Disabled cmd',
      'Encoded PowerShell',
      'Linux reverse shell',
      'Slow regex',
      'Suspicious cmd',
    ]);
    assert.deepEqual(titles({ tag: 'attack.t105' }), [], 'no prefix match beyond a technique');
  });
  it('text: case-insensitive over title, id and description', () => {
    assert.deepEqual(titles({ text: 'ssh' }), ['SSH failed password', 'SSH odd field']);
    assert.deepEqual(titles({ text: '-ENC' }), ['Encoded PowerShell'], 'description');
    assert.deepEqual(titles({ text: id(7).slice(-6) }), ['DNS tunnel'], 'id');
  });
  it('filters combine', () => {
    assert.deepEqual(titles({ state: 'blocked', tag: 'attack.t1059', text: 'cmd' }), ['Disabled cmd', 'Suspicious cmd']);
  });
});

describe('paging', () => {
  it('pages with a cursor in title order and refuses a cursor not its own', () => {
    const first = planPage(plan, {}, 4)!;
    assert.equal(first.rules.length, 4);
    assert.ok(first.nextCursor);
    const second = planPage(plan, {}, 4, first.nextCursor!)!;
    const third = planPage(plan, {}, 4, second.nextCursor!)!;
    assert.equal(third.nextCursor, null);
    assert.deepEqual(
      [...first.rules, ...second.rules, ...third.rules].map((e) => e.ruleId),
      plan.rules.map((e) => e.ruleId),
    );
    assert.equal(planPage(plan, {}, 4, 'not-a-cursor!'), undefined);
    assert.equal(planPage(plan, {}, 4, Buffer.from('[1,2]').toString('base64url')), undefined);
  });

  it('any limit and filter reassemble the filtered list exactly (property)', () => {
    const filters: PlanFilter[] = [{}, { state: 'blocked' }, { tag: 'attack.t1059' }, { problem: 'no_source_connected' }, { text: 's' }];
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 12 }), fc.constantFrom(...filters), (limit, f) => {
        const out: string[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 20; i++) {
          const page = planPage(plan, f, limit, cursor)!;
          assert.ok(page.rules.length <= limit);
          out.push(...page.rules.map((e) => e.ruleId));
          if (page.nextCursor === null) break;
          cursor = page.nextCursor;
        }
        assert.deepEqual(out, matchingEntries(plan, f).map((e) => e.ruleId));
      }),
    );
  });
});

describe('the ATT&CK coverage matrix', () => {
  const m = attackMatrix(plan.rules);
  it('has the tactic columns in ATT&CK order', () => {
    assert.deepEqual(m.tactics.map((t) => t.tactic), [...ATTACK_TACTICS]);
    assert.equal(ATTACK_TACTICS.indexOf('initial-access') < ATTACK_TACTICS.indexOf('execution'), true);
  });
  it('folds sub-techniques into their technique and colours a cell by the best state of its enabled rules', () => {
    const execution = m.tactics.find((t) => t.tactic === 'execution')!;
    const t1059 = execution.techniques.find((c) => c.technique === 't1059')!;
    assert.deepEqual(t1059.subTechniques, ['t1059.001', 't1059.004']);
    assert.equal(t1059.rules, 4, 'the disabled rule does not cover it');
    assert.deepEqual(t1059.byState, { ready: 0, degraded: 0, blocked: 3, quarantined: 1 });
    assert.equal(t1059.best, 'blocked');
    assert.equal(t1059.worst, 'quarantined');
    const access = m.tactics.find((t) => t.tactic === 'credential-access')!;
    const t1110 = access.techniques.find((c) => c.technique === 't1110')!;
    assert.deepEqual([t1110.rules, t1110.best, t1110.worst], [2, 'ready', 'degraded']);
    assert.deepEqual(m.untactic.map((c) => c.technique), ['t1105']);
    assert.equal(m.rulesTagged, 9);
  });
});

describe('vigil rules import counts with the plan', () => {
  it('its summary is the plan summary of the imported rules', () => {
    const ids = new Set([id(1), id(3), id(5)]);
    const s = importPlanSummary(plan.rules, ids);
    assert.deepEqual(s, planSummary(plan.rules.filter((e) => ids.has(e.ruleId))));
    assert.deepEqual([s.rules, s.ready, s.blocked], [3, 1, 2]);
    assert.equal(s.byProblem.no_source_connected, 1);
    assert.equal(s.byProblem.logsource_unsupported, 1);
    assert.equal(
      planLine(s),
      '3 rules: 1 ready, 0 degraded, 2 blocked, 0 quarantined, 0 disabled (1 logsource unsupported, 1 no source connected)',
    );
  });
});
