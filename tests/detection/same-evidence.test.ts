import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { detectionPlan } from '../../src/projections/plan.js';
import { loadBuiltinPack } from '../../src/detection/builtin-pack.js';
import { compileSigma } from '../../src/detection/compile.js';
import { initialCorrelationState } from '../../src/detection/correlate.js';
import { createRuleSet } from '../../src/detection/engine.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import type { CompiledSigma } from '../../src/detection/types.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { syslogLineEvent } from '../../src/clients/collector/syslog-line.js';
import { toNormalizedEvent } from '../../src/commands/collector-submit.js';
import { linuxJournal } from '../../src/normalizers/linux-journal.js';
import { syslogRfc5424 } from '../../src/normalizers/syslog-rfc5424.js';
import type { DetectionState } from '../../src/projections/detection.js';
import { sourcesProjection, type SourcesState } from '../../src/projections/sources.js';
import type { LogRecord } from '../../src/kernel/record.js';

/**
 * Issue 22.1: the same evidence raises the same built-in alert whichever route brought it, and a
 * rule the plan calls ready does fire on that evidence.
 */

const pack = parseSigmaText(loadBuiltinPack().text);
assert.ok(pack.ok);
const rules: CompiledSigma[] = pack.docs.map((d) => {
  const c = compileSigma(d);
  assert.ok(c.ok, c.ok ? '' : c.error);
  return c.rule;
});
const BRUTE_FORCE = '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a03';
const FAILURE = '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a01';

const AT = Date.parse('2026-11-23T10:00:00Z');
const line = (i: number) => `Failed password for root from 198.51.100.77 port ${40000 + i} ssh2`;
const only = (r: ReturnType<typeof linuxJournal.normalize>): NormalizedEvent => {
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r));
  return r.events[0]!;
};

/** Six failed sshd logins from one address, as each route delivers them. */
const ROUTES: Record<string, (i: number) => NormalizedEvent> = {
  journal: (i) => only(linuxJournal.normalize({ __REALTIME_TIMESTAMP: String((AT + i * 1000) * 1000), MESSAGE: line(i), SYSLOG_IDENTIFIER: 'sshd', _PID: '4242', _HOSTNAME: 'web-01' }, { ingestedAt: new Date(AT).toISOString() })),
  syslog: (i) => only(syslogRfc5424.normalize({ message: `<38>1 ${new Date(AT + i * 1000).toISOString()} web-01 sshd 4242 - - ${line(i)}` }, { ingestedAt: new Date(AT).toISOString() })),
  'collector (tailed file)': (i) => {
    const submitted = syslogLineEvent(`Nov 23 10:00:0${i} web-01 sshd[4242]: ${line(i)}`, { path: '/var/log/auth.log', ino: 7, offset: i * 100 }, new Date(AT + 60_000));
    return toNormalizedEvent(structuredClone(submitted), 'web-01');
  },
  'normalized events (another shipper)': (i) => {
    const e = ROUTES['journal']!(i);
    return { ...e, id: `shipper:${i}`, source: { adapter: 'fluent-bit', instance: 'web-01', recordId: String(i) } };
  },
};

function sourcesOf(events: NormalizedEvent[]): SourcesState {
  const record = { seq: 1, at: new Date(AT + 60_000).toISOString(), type: 'EventsIngested', data: { events, count: events.length }, prev: '' } as unknown as LogRecord;
  return sourcesProjection.evolve(sourcesProjection.initial(), record);
}

describe('the same evidence raises the same built-in alert on every route', () => {
  for (const [route, make] of Object.entries(ROUTES)) {
    it(`${route}: six failed sshd logins raise "SSH brute force from one source", which the plan calls ready`, () => {
      const events = [0, 1, 2, 3, 4, 5].map(make);
      for (const e of events) assert.deepEqual([e.class, e.activity, e.outcome], ['authentication', 'logon', 'failure'], route);
      const { matches } = createRuleSet(rules).evaluate(initialCorrelationState(), events);
      assert.ok(matches.some((m) => m.ruleId === BRUTE_FORCE), `${route}: brute force fired`);
      const detection: DetectionState = { rules: new Map(rules.map((r) => [r.id, { id: r.id, doc: {}, compiled: r, source: 'builtin', importedAt: '', enabled: true }])), correlation: initialCorrelationState() };
      const plan = detectionPlan(detection, sourcesOf(events), new Date(AT + 120_000), 24);
      for (const id of [BRUTE_FORCE, FAILURE]) {
        const entry = plan.rules.find((r) => r.ruleId === id)!;
        assert.equal(entry.state, 'ready', `${route}: ${entry.title} ${JSON.stringify(entry.missingCapabilities)}`);
        assert.ok(matches.some((m) => m.ruleId === id || (id === FAILURE && m.ruleId === BRUTE_FORCE)), `${route}: ${entry.title} is ready and fires`);
      }
    });
  }
});

describe('the plan of a rule no source can feed names what to do', () => {
  it('a blocked fix names the route, the configuration and the doc section', () => {
    const detection: DetectionState = { rules: new Map(rules.map((r) => [r.id, { id: r.id, doc: {}, compiled: r, source: 'builtin', importedAt: '', enabled: true }])), correlation: initialCorrelationState() };
    const plan = detectionPlan(detection, new Map(), new Date(AT), 24);
    const ssh = plan.rules.find((r) => r.ruleId === FAILURE)!;
    assert.equal(ssh.state, 'blocked');
    assert.match(ssh.missingCapabilities[0]!.fix, /see docs\/normalizers\/linux-journal\.md/);
    // What to do is said once, for every rule that needs the source: the plan's fix for it.
    assert.match(plan.guides.get(ssh.needs!)!.action, /\/api\/v1\/ingest\/linux-journal/);
    for (const entry of plan.rules) for (const m of entry.missingCapabilities) assert.match(m.fix, /see docs\/[a-z/-]+\.md/, `${entry.title}: ${m.fix}`);
  });

  it('the collector self-monitoring rules turn ready after a successful enrollment', () => {
    const detection: DetectionState = { rules: new Map(rules.map((r) => [r.id, { id: r.id, doc: {}, compiled: r, source: 'builtin', importedAt: '', enabled: true }])), correlation: initialCorrelationState() };
    const enrolled = { seq: 1, at: new Date(AT).toISOString(), type: 'CollectorEnrolled', data: { collectorId: 'web-01' }, prev: '' } as unknown as LogRecord;
    const sources = sourcesProjection.evolve(sourcesProjection.initial(), enrolled);
    const plan = detectionPlan(detection, sources, new Date(AT + 60_000), 24);
    const collectorRules = plan.rules.filter((r) => r.requiredCapabilities.includes("Vigil's own collector events"));
    assert.equal(collectorRules.length, 3);
    for (const r of collectorRules) assert.equal(r.state, 'ready', `${r.title}: ${JSON.stringify(r.missingCapabilities)}`);
  });

  it('the export self-monitoring rule turns ready once export destinations are configured, and names export.destinations before', () => {
    const detection: DetectionState = { rules: new Map(rules.map((r) => [r.id, { id: r.id, doc: {}, compiled: r, source: 'builtin', importedAt: '', enabled: true }])), correlation: initialCorrelationState() };
    const exportRule = (sources: SourcesState) => detectionPlan(detection, sources, new Date(AT + 60_000), 24).rules.find((r) => r.requiredCapabilities.includes("Vigil's own export events"))!;
    const before = exportRule(new Map());
    assert.equal(before.state, 'blocked');
    assert.match(before.missingCapabilities[0]!.fix, /docs\/export\.md/);
    const guides = detectionPlan(detection, new Map(), new Date(AT + 60_000), 24).guides;
    assert.match(guides.get(before.needs!)!.action, /export\.destinations/);
    const none = { seq: 1, at: new Date(AT).toISOString(), type: 'ExportConfigurationRecorded', data: { destinations: [] }, prev: '' } as unknown as LogRecord;
    assert.equal(exportRule(sourcesProjection.evolve(sourcesProjection.initial(), none)).state, 'blocked', 'no destination, nothing to watch');
    const configured = { ...none, data: { destinations: [{ name: 'siem', kind: 'webhook' }] } } as unknown as LogRecord;
    const after = exportRule(sourcesProjection.evolve(sourcesProjection.initial(), configured));
    assert.equal(after.state, 'ready', JSON.stringify(after.missingCapabilities));
  });
});
