import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { indexKeysForEvent } from '../../src/detection/logsources.js';
import { compileSigma, type CompiledRule } from '../../src/detection/compile.js';
import { createRuleSet } from '../../src/detection/engine.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { opentelemetryLog } from '../../src/normalizers/opentelemetry-log.js';
import { fixturePath } from '../helpers/paths.js';
import { exportRequest, receiverBody, regressionCases } from '../helpers/windows-events.js';

/**
 * SigmaHQ's regression data (tests/fixtures/sigmahq/regression_data): for 192 rules, the real
 * Windows event each must fire on. Each event is sent as the OpenTelemetry Collector's
 * `windowseventlog` receiver sends it, through the opentelemetry-log normalizer, to its rule.
 */

const cases = regressionCases(fixturePath('sigmahq'));

function compileRule(path: string): CompiledRule {
  const parsed = parseSigmaText(readFileSync(path, 'utf8'));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  const compiled = compileSigma(parsed.docs[0]);
  assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
  assert.equal(compiled.rule.kind, 'detection');
  return compiled.rule as CompiledRule;
}

/** The events, normalized as the receiver's OTLP export would be; which rules fired on them. */
function firedBy(rule: CompiledRule, bodies: Array<Record<string, unknown>>): number {
  const normalized = opentelemetryLog.normalize(exportRequest(bodies), { ingestedAt: '2026-11-23T00:00:00Z' });
  assert.ok(normalized.ok, normalized.ok ? '' : JSON.stringify(normalized));
  return createRuleSet([rule]).matchEvents(normalized.events).matches.filter((m) => m.ruleId === rule.id).length;
}

/** Records whose values are only in `<UserData>`: receivers before March 2026 sent no `user_data`. */
const USER_DATA_ONLY = (events: Array<Record<string, unknown>>): boolean =>
  events.every((e) => (e['Event'] as Record<string, unknown>)['EventData'] === undefined);

describe('SigmaHQ regression data through the windowseventlog receiver shape', () => {
  it('has the 192 event files, each naming its rule', () => {
    assert.equal(cases.length, 192);
    for (const c of cases) assert.match(c.ruleId, /^[0-9a-f-]{36}$/, c.eventFile);
  });

  it('every one of the 192 events fires its rule, under both event_data shapes; the rule carries its author', () => {
    const missed: string[] = [];
    let fired = 0;
    for (const c of cases) {
      const rule = compileRule(c.rulePath);
      assert.equal(rule.id, c.ruleId, c.rulePath);
      assert.ok(rule.author && rule.author.length > 0, `${c.rulePath} has an author for the alert`);
      for (const shape of ['map', 'array'] as const) {
        const hits = firedBy(rule, c.events.map((e) => receiverBody(e, shape)));
        if (hits === 0) missed.push(`${shape} ${c.title} (${c.ruleId}) ${c.eventFile.slice(c.eventFile.indexOf('regression_data'))}`);
        else if (shape === 'map') fired++;
      }
    }
    assert.deepEqual(missed, []);
    assert.equal(fired, 192);
  });

  it('the one record whose values are only in UserData fires through user_data, and cannot from a receiver without it', () => {
    const userDataOnly = cases.filter((c) => USER_DATA_ONLY(c.events));
    assert.deepEqual(userDataOnly.map((c) => c.ruleId), ['d4f1a2b3-7c8e-4d5f-b6a9-1e0c2d3f4e5b']);
    const [c] = userDataOnly;
    const rule = compileRule(c!.rulePath);
    assert.equal(firedBy(rule, c!.events.map((e) => receiverBody(e, 'map', true))), 1);
    assert.equal(firedBy(rule, c!.events.map((e) => receiverBody(e, 'map', false))), 0);
  });
});

describe('the prefilter over the whole SigmaHQ rule set', () => {
  it('finds exactly the matches that trying every rule finds (regression events with all 3,141 rules)', () => {
    const rules: CompiledRule[] = [];
    const visit = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const p = `${dir}/${name}`;
        if (statSync(p).isDirectory()) visit(p);
        else if (name.endsWith('.yml')) rules.push(compileRule(p));
      }
    };
    visit(fixturePath('sigmahq', 'rules'));
    assert.equal(rules.length, 3141);
    assert.ok(rules.filter((r) => r.triggers).length > 2000, 'most rules have a trigger');
    const bodies = cases.flatMap((c) => c.events.map((e) => receiverBody(e)));
    const normalized = opentelemetryLog.normalize(exportRequest(bodies), { ingestedAt: '2026-11-23T00:00:00Z' });
    assert.ok(normalized.ok);
    const events = normalized.events;
    const fast = createRuleSet(rules).matchEvents(events).matches.map((m) => `${m.ruleId} ${m.eventIds[0]}`).sort();
    const slow = events.flatMap((e) => {
      const keys = new Set(indexKeysForEvent(e));
      return rules.filter((r) => r.indexKeys.some((k) => keys.has(k)) && r.match(e)).map((r) => `${r.id} ${e.id}`);
    }).sort();
    assert.ok(slow.length >= 191);
    assert.deepEqual(fast, slow);
  });
});
