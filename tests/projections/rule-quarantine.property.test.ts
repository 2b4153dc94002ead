import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { activeRuleSet } from '../../src/projections/detection.js';
import { detectionPlan } from '../../src/projections/plan.js';
import { memoryModels } from '../helpers/decider-spec.js';
import { dnsRule, ruleEnabledChanged, ruleQuarantined, rulesImported } from '../helpers/event-fixtures.js';

const IDS = ['aaaaaaaa-0000-4000-8000-000000000001', 'aaaaaaaa-0000-4000-8000-000000000002'] as const;

type Step =
  | { kind: 'import'; rule: 0 | 1 }
  | { kind: 'enable'; rule: 0 | 1; enabled: boolean }
  | { kind: 'quarantine'; rule: 0 | 1 };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('import' as const), rule: fc.constantFrom(0 as const, 1 as const) }),
  fc.record({ kind: fc.constant('enable' as const), rule: fc.constantFrom(0 as const, 1 as const), enabled: fc.boolean() }),
  fc.record({ kind: fc.constant('quarantine' as const), rule: fc.constantFrom(0 as const, 1 as const) }),
);

/**
 * The quarantine's state machine against a model of it: a rule evaluates while it is installed,
 * enabled and not quarantined; a quarantine holds until the rule is enabled (disabling and
 * re-importing keep it); the plan says `quarantined` exactly then.
 */
describe('rule quarantine (property)', () => {
  it('a rule evaluates iff installed, enabled and not quarantined since it was last enabled', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const models = memoryModels();
        const model = IDS.map(() => ({ installed: false, enabled: true, quarantined: false }));
        for (const s of steps) {
          const id = IDS[s.rule];
          const m = model[s.rule]!;
          if (s.kind === 'import') {
            models.append([rulesImported(dnsRule(id))]);
            m.installed = true;
          } else if (s.kind === 'enable') {
            models.append([ruleEnabledChanged(id, s.enabled, 'why')]);
            if (m.installed) {
              m.enabled = s.enabled;
              if (s.enabled) m.quarantined = false;
            }
          } else {
            models.append([ruleQuarantined(id, `alert-${id}`)]);
            if (m.installed) m.quarantined = true;
          }
          const active = new Set(activeRuleSet(models.detection).inline.map((r) => r.id));
          const plan = detectionPlan(models.detection, models.sources, new Date('2026-11-22T10:00:00Z'), 24);
          IDS.forEach((ruleId, i) => {
            const want = model[i]!;
            assert.equal(active.has(ruleId), want.installed && want.enabled && !want.quarantined, `${ruleId} active`);
            const entry = plan.rules.find((r) => r.ruleId === ruleId);
            assert.equal(entry !== undefined, want.installed);
            if (entry) assert.equal(entry.state === 'quarantined', want.quarantined);
          });
          assert.equal(plan.summary.quarantined, model.filter((r) => r.installed && r.enabled && r.quarantined).length);
        }
      }),
      { numRuns: 200 },
    );
  });
});
