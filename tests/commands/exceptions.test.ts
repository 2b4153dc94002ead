import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { alertingStateOf, evaluateEvidence } from '../../src/commands/alerting/evaluate.js';
import { createRuleCosts } from '../../src/commands/alerting/rule-costs.js';
import { createRuleRunner } from '../../src/commands/alerting/rule-runner.js';
import { DEFAULT_RULE_BUDGET } from '../../src/commands/alerting/rule-budget.js';
import {
  EXCEPTION_EXPIRING_RULE,
  EXCEPTIONS_LIVE_MAX,
  decideChangeException,
  decideCreateException,
  decideExceptionCheck,
  decideRevokeException,
  draftFromAlert,
} from '../../src/commands/exceptions.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { eventOf, type EventData } from '../../src/events/union.js';
import { exceptionsProjection } from '../../src/projections/exceptions.js';
import { VIGIL_RULE_IDS, resolveRule } from '../../src/projections/alerts-query.js';
import { THREAT_INTEL_RULE } from '../../src/commands/alerting/intel-alerts.js';
import { DISK_LOW_RULE, RULE_QUARANTINED_RULE, SOURCE_SILENT_RULE, WITNESS_REFUSED_RULE } from '../../src/commands/system-alerts.js';
import { memoryModels, spec, type Given } from '../helpers/decider-spec.js';
import { dnsRule, normalizedEvent, rulesImported } from '../helpers/event-fixtures.js';

const RULE = 'aaaaaaaa-0000-4000-8000-0000000000a1';
const OTHER = 'aaaaaaaa-0000-4000-8000-0000000000b2';
const ANALYST = { id: 'ana', authentication: 'bearer' };
const NOW = '2026-11-22T10:00:00.000Z';
const SETTINGS = { incidentWindowMs: 3_600_000 };
const taggedRule = (id: string) => dnsRule(id).replace('level: medium', 'level: medium\ntags: [attack.t1071]');

/** A DNS query for evil.example from `ip`, as the network monitor stores it. */
const query = (id: string, ip: string): NormalizedEvent =>
  normalizedEvent({
    id,
    source: { adapter: 'network-monitor', instance: 'dns', recordId: id },
    sourceEndpoint: { ip, port: 5353 },
    attributes: { query: 'evil.example', 'id.orig_h': ip },
  });

const scanner = { sel: { 'id.orig_h': '10.9.9.9' }, condition: 'sel' };
const body = (over: Record<string, unknown> = {}) => ({
  scope: { kind: 'rule' as const, ruleId: RULE },
  detection: scanner,
  reason: 'the vulnerability scanner resolves every name it finds',
  owner: 'ana',
  ticket: 'CHG-123',
  expiresAt: '2026-11-29T10:00:00.000Z',
  ...over,
});

type Create = { body: ReturnType<typeof body>; admin?: boolean; now?: string };
const create = spec((m, c: Create) =>
  decideCreateException(m, c.body as never, { now: c.now ?? NOW, actor: ANALYST, requestId: 'req-1' }, { mayBePermanent: c.admin === true }),
);

/** The given events and the id of the exception they create (body `over`). */
function withException(over: Record<string, unknown> = {}): { given: Given[]; id: string } {
  const given: Given[] = [rulesImported(taggedRule(RULE) + '---\n' + dnsRule(OTHER))];
  const made = create.given(given).when({ body: body(over) }).thenAccepts(() => {});
  return { given: [...given, ...made.events], id: (made.result as { id: string }).id };
}

function evaluate(given: readonly Given[], events: NormalizedEvent[], now: string) {
  const models = memoryModels();
  models.append(given);
  models.append([eventOf('EventsIngested', { events })]);
  const run = createRuleRunner(DEFAULT_RULE_BUDGET, createRuleCosts());
  return { models, out: evaluateEvidence(alertingStateOf(models), events, { now }, SETTINGS, run) };
}

describe('creating an exception', () => {
  it('records its terms, who made it and why, normalizing the end to UTC', () => {
    create.given([rulesImported(dnsRule(RULE))]).when({ body: body({ expiresAt: '2026-11-29T12:00:00+02:00' }) }).thenAccepts((events, result) => {
      assert.equal(events.length, 1);
      const d = events[0]!.data as EventData<'ExceptionCreated'>;
      assert.equal(events[0]!.type, 'ExceptionCreated');
      assert.equal(d.exceptionId, (result as { id: string }).id);
      assert.deepEqual({ ...d, exceptionId: '' }, { exceptionId: '', ...body(), principal: 'ana', authentication: 'bearer' });
    });
  });

  it('refuses one without an end, with an end past or more than a year ahead, or permanent for a non-admin', () => {
    const given = [rulesImported(dnsRule(RULE))];
    const { expiresAt: _e, ...open } = body();
    create.given(given).when({ body: open as never }).thenRejects('invalid', /invalid exception/);
    create.given(given).when({ body: body({ expiresAt: '2026-11-21T10:00:00.000Z' }) }).thenRejects('invalid');
    create.given(given).when({ body: body({ expiresAt: '2028-01-01T00:00:00.000Z' }) }).thenRejects('invalid');
    create.given(given).when({ body: { ...open, permanent: true } as never }).thenRejects('invalid');
    create.given(given).when({ body: { ...open, permanent: true } as never, admin: true }).thenAccepts((events) => {
      assert.equal((events[0]!.data as EventData<'ExceptionCreated'>).expiresAt, undefined);
    });
  });

  it('refuses one more past EXCEPTIONS_LIVE_MAX live ones, and takes it again once one is revoked', () => {
    const who = { principal: 'ana', authentication: 'bearer' };
    const made = Array.from({ length: EXCEPTIONS_LIVE_MAX }, (_, k) =>
      eventOf('ExceptionCreated', { exceptionId: `exc_${k}`, scope: { kind: 'all' }, detection: scanner, reason: 'r', owner: 'o', expiresAt: '2026-11-29T10:00:00.000Z', ...who }));
    const given = [rulesImported(dnsRule(RULE)), ...made];
    create.given(given).when({ body: body() }).thenRejects('conflict', /10000 exceptions are live/);
    create.given([...given, eventOf('ExceptionRevoked', { exceptionId: 'exc_7', comment: 'c', ...who })]).when({ body: body() }).thenAccepts(() => {});
  });

  it('refuses an unknown rule and a condition that is not Sigma detection syntax', () => {
    const given = [rulesImported(dnsRule(RULE))];
    create.given(given).when({ body: body({ scope: { kind: 'rule', ruleId: 'nope' } }) }).thenRejects('invalid');
    create.given(given).when({ body: body({ detection: { sel: { a: 1 } } }) }).thenRejects('invalid');
    create.given(given).when({ body: body({ detection: { sel: { a: 1 }, condition: 'sel and missing' } }) }).thenRejects('invalid');
    create.given(given).when({ body: body({ detection: { sel: { 'a|re': '(?=x)' }, condition: 'sel' } }) }).thenRejects('invalid');
  });
});

describe('an exception in detection', () => {
  it('keeps a covered match from alerting, records it as excepted, while another source still alerts', () => {
    const { given, id } = withException();
    const { out } = evaluate(given, [query('q1', '10.9.9.9'), query('q2', '10.1.1.1')], '2026-11-23T10:00:00.000Z');
    const excepted = out.events.find((e) => e.type === 'MatchesExcepted')!.data as EventData<'MatchesExcepted'>;
    assert.deepEqual(excepted.matches.filter((m) => m.ruleId === RULE), [{ exceptionId: id, ruleId: RULE, eventIds: ['q1'], time: '2026-11-22T09:00:00.000Z' }]);
    const raised = out.events.filter((e) => e.type === 'AlertRaised').map((e) => e.data as EventData<'AlertRaised'>);
    // The exception is scoped to RULE: OTHER alerts on both, RULE only on the other source.
    assert.deepEqual(raised.filter((a) => a.ruleId === RULE).map((a) => a.evidence.map((r) => r.eventId)), [['q2']]);
    assert.deepEqual(raised.filter((a) => a.ruleId === OTHER).flatMap((a) => a.evidence.map((r) => r.eventId)).sort(), ['q1', 'q2']);
  });

  it('counts what it kept on the exception and on the rule', () => {
    const { given, id } = withException();
    const { models, out } = evaluate(given, [query('q1', '10.9.9.9'), query('q3', '10.9.9.9')], '2026-11-23T10:00:00.000Z');
    models.append(out.events);
    const e = models.exceptions.exceptions.get(id)!;
    assert.equal(e.matchesExcepted, 2);
    assert.deepEqual(e.byRule, { [RULE]: 2 });
    assert.equal(models.exceptions.exceptedByRule.get(RULE), 2);
  });

  it('stops applying at expiresAt by itself: the same events alert again after it', () => {
    const { given } = withException();
    const { out } = evaluate(given, [query('q1', '10.9.9.9')], '2026-11-29T10:00:00.000Z');
    assert.ok(!out.events.some((e) => e.type === 'MatchesExcepted'));
    assert.ok(out.events.some((e) => e.type === 'AlertRaised' && (e.data as EventData<'AlertRaised'>).ruleId === RULE));
  });

  it('scoped by tag covers the rules carrying it, and none other; a revoked one covers nothing', () => {
    const { given, id } = withException({ scope: { kind: 'tag', tag: 'ATTACK.T1071' } });
    const { out } = evaluate(given, [query('q1', '10.9.9.9')], '2026-11-23T10:00:00.000Z');
    const excepted = out.events.find((e) => e.type === 'MatchesExcepted')!.data as EventData<'MatchesExcepted'>;
    assert.deepEqual(excepted.matches.map((m) => m.ruleId), [RULE]);
    const revoke = spec((m, c: { id: string }) => decideRevokeException(m, c.id, { comment: 'scanner retired' }, { now: NOW, actor: ANALYST }));
    const revoked = revoke.given(given).when({ id }).thenAccepts(() => {});
    revoke.given([...given, ...revoked.events]).when({ id }).thenRejects('conflict');
    const after = evaluate([...given, ...revoked.events], [query('q1', '10.9.9.9')], '2026-11-23T10:00:00.000Z');
    assert.ok(!after.out.events.some((e) => e.type === 'MatchesExcepted'));
  });

  it('scoped to all rules reads the condition with each rule\'s field names', () => {
    const { given } = withException({ scope: { kind: 'all' }, detection: { sel: { query: 'evil.example', 'sourceEndpoint.ip': '10.9.9.9' }, condition: 'sel' } });
    const { out } = evaluate(given, [query('q1', '10.9.9.9'), query('q2', '10.1.1.1')], '2026-11-23T10:00:00.000Z');
    const excepted = out.events.find((e) => e.type === 'MatchesExcepted')!.data as EventData<'MatchesExcepted'>;
    assert.deepEqual(excepted.matches.map((m) => m.ruleId).sort(), [RULE, OTHER].sort());
    assert.deepEqual(out.events.filter((e) => e.type === 'AlertRaised').length, 2);
  });
});

describe('changing an exception', () => {
  const change = spec((m, c: { id: string; over: Record<string, unknown>; admin?: boolean }) =>
    decideChangeException(m, c.id, { ...body(c.over), comment: 'scanner moved' } as never, { now: NOW, actor: ANALYST }, { mayBePermanent: c.admin === true }),
  );

  it('replaces its terms as a whole and keeps the history; an unknown one is not found', () => {
    const { given, id } = withException();
    const changed = change.given(given).when({ id, over: { detection: { sel: { 'id.orig_h': '10.9.9.8' }, condition: 'sel' } } }).thenAccepts(() => {});
    const models = memoryModels();
    models.append([...given, ...changed.events]);
    const e = models.exceptions.exceptions.get(id)!;
    assert.deepEqual(e.detection, { sel: { 'id.orig_h': '10.9.9.8' }, condition: 'sel' });
    assert.deepEqual(e.history.map((h) => h.kind), ['created', 'changed']);
    assert.equal(e.history[1]!.comment, 'scanner moved');
    change.given(given).when({ id: 'exc_nope', over: {} }).thenRejects('not_found');
  });
});

describe('the scheduled exception check', () => {
  const check = spec((m, c: { now: string }) => decideExceptionCheck(m, 72 * 3_600_000, { now: c.now }));

  it('reminds the owner once within the reminder window, with a vigil.exception-expiring alert', () => {
    const { given, id } = withException();
    check.given(given).when({ now: '2026-11-25T10:00:00.000Z' }).then([], { expired: [], reminded: [] });
    const reminded = check.given(given).when({ now: '2026-11-27T10:00:00.000Z' }).thenAccepts((events, result) => {
      assert.deepEqual(result, { expired: [], reminded: [id] });
      assert.deepEqual(events.map((e) => e.type), ['ExceptionExpiryReminded', 'AlertRaised']);
      const alert = events[1]!.data as EventData<'AlertRaised'>;
      assert.equal(alert.ruleId, EXCEPTION_EXPIRING_RULE);
      assert.equal((events[0]!.data as EventData<'ExceptionExpiryReminded'>).alertId, alert.alertId);
      assert.match(alert.title, /expires at 2026-11-29T10:00:00.000Z; owner ana/);
    });
    check.given([...given, ...reminded.events]).when({ now: '2026-11-28T10:00:00.000Z' }).then([], { expired: [], reminded: [] });
  });

  it('records the end once it has passed, once', () => {
    const { given, id } = withException();
    const ended = check.given(given).when({ now: '2026-11-29T10:00:00.000Z' }).then(
      [{ type: 'ExceptionExpired', data: { exceptionId: id, expiresAt: '2026-11-29T10:00:00.000Z' } }],
      { expired: [id], reminded: [] },
    );
    check.given([...given, ...ended.events]).when({ now: '2026-11-30T10:00:00.000Z' }).then([], { expired: [], reminded: [] });
  });
});

describe('the exceptions fold', () => {
  it('gives the same state folded from scratch and restored from its snapshot, whatever the history', () => {
    const kinds = fc.array(fc.constantFrom('create', 'change', 'revoke', 'expire', 'remind', 'match'), { maxLength: 25 });
    fc.assert(
      fc.property(kinds, (steps) => {
        const records = steps.map((kind, i) => {
          const id = `exc_${i % 3}`;
          const at = new Date(Date.parse(NOW) + i * 60_000).toISOString();
          const terms = { scope: { kind: 'all' as const }, detection: scanner, reason: 'r', owner: 'o', expiresAt: '2026-12-01T00:00:00.000Z' };
          const who = { principal: 'ana', authentication: 'bearer' };
          const event =
            kind === 'create' ? eventOf('ExceptionCreated', { exceptionId: id, ...terms, ...who })
            : kind === 'change' ? eventOf('ExceptionChanged', { exceptionId: id, ...terms, ticket: 'T-1', comment: 'c', ...who })
            : kind === 'revoke' ? eventOf('ExceptionRevoked', { exceptionId: id, comment: 'c', ...who })
            : kind === 'expire' ? eventOf('ExceptionExpired', { exceptionId: id, expiresAt: terms.expiresAt })
            : kind === 'remind' ? eventOf('ExceptionExpiryReminded', { exceptionId: id, expiresAt: terms.expiresAt, alertId: `a${i}` })
            : eventOf('MatchesExcepted', { matches: [{ exceptionId: id, ruleId: 'r', eventIds: [`e${i}`], time: at }] });
          return { seq: i + 1, at, type: event.type, data: event.data, prev: '' };
        });
        let live = exceptionsProjection.initial();
        for (const r of records) live = exceptionsProjection.evolve(live, r as never);
        const half = Math.floor(records.length / 2);
        let restored = exceptionsProjection.initial();
        for (const r of records.slice(0, half)) restored = exceptionsProjection.evolve(restored, r as never);
        restored = exceptionsProjection.restore!(structuredClone(exceptionsProjection.snapshot!(restored)));
        for (const r of records.slice(half)) restored = exceptionsProjection.evolve(restored, r as never);
        assert.deepEqual(exceptionsProjection.snapshot!(restored), exceptionsProjection.snapshot!(live));
      }),
      { numRuns: 200 },
    );
  });
});

describe('a draft from an alert', () => {
  it('names the alert\'s rule, who and from where its first evidence came, a week ahead, the analyst as owner', () => {
    const draft = draftFromAlert(
      { id: 'alr_1', ruleId: RULE, matchReason: { fields: [{ field: 'query', value: 'evil.example' }] } },
      normalizedEvent({ actor: { user: 'svc-scanner' }, sourceEndpoint: { ip: '10.9.9.9' } }),
      'ana',
      NOW,
    );
    assert.deepEqual(draft, {
      scope: { kind: 'rule', ruleId: RULE },
      detection: { selection: { 'actor.user': 'svc-scanner', 'sourceEndpoint.ip': '10.9.9.9' }, condition: 'selection' },
      reason: '',
      owner: 'ana',
      expiresAt: '2026-11-29T10:00:00.000Z',
      fromAlertId: 'alr_1',
    });
    const bare = draftFromAlert({ id: 'alr_2', ruleId: RULE, matchReason: { fields: [{ field: 'query', value: 'evil.example' }] } }, undefined, 'ana', NOW);
    assert.deepEqual(bare.detection, { selection: { query: 'evil.example' }, condition: 'selection' });
  });
});

describe("Vigil's own rules", () => {
  it('are all known to the rule filter before they raise anything', () => {
    assert.deepEqual(
      [...VIGIL_RULE_IDS].sort(),
      [SOURCE_SILENT_RULE, DISK_LOW_RULE, RULE_QUARANTINED_RULE, WITNESS_REFUSED_RULE, EXCEPTION_EXPIRING_RULE, THREAT_INTEL_RULE].sort(),
    );
    const none = { alerts: new Map() };
    assert.deepEqual(resolveRule(none, [], EXCEPTION_EXPIRING_RULE), [EXCEPTION_EXPIRING_RULE]);
    assert.equal(resolveRule(none, [], 'vigil.no-such-check'), undefined);
  });
});
