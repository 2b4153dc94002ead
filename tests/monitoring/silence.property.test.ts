import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as v from 'valibot';
import { decideSilenceCheck } from '../../src/commands/check-silence.js';
import { eventOf, type EventData } from '../../src/events/union.js';
import { matchesSource, silenceThresholdMs, usualCadenceMs } from '../../src/projections/monitoring-cadence.js';
import { MonitoringSchema } from '../../src/projections/monitoring-settings.js';
import { SOURCE_SILENT_RULE } from '../../src/commands/system-alerts.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { MONITORING, type MonitoringState } from '../../src/projections/monitoring.js';
import { memoryModels } from '../helpers/decider-spec.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

const BASE = Date.parse('2026-11-22T00:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const settingsArb = fc.record({
  floorSeconds: fc.integer({ min: 1, max: 600 }),
  spanSeconds: fc.integer({ min: 0, max: 7200 }),
  multiplier: fc.integer({ min: 1, max: 10 }),
  minSamples: fc.integer({ min: 1, max: 5 }),
}).map((s) => v.parse(MonitoringSchema, { silence: { floorSeconds: s.floorSeconds, ceilingSeconds: s.floorSeconds + s.spanSeconds, multiplier: s.multiplier, minSamples: s.minSamples } }).silence);

/** A step: time passes, then a source reports or the scheduler checks. */
const stepArb = fc.record({
  advanceMs: fc.integer({ min: 0, max: 3_600_000 }),
  what: fc.oneof(fc.constant('check' as const), fc.constantFrom('a', 'b')),
});

describe('the silence state machine (cadence learner + scheduled checks)', () => {
  it('declares exactly the overdue sources, keeps one open alert per silence, and resumes only sources that reported again', () => {
    fc.assert(fc.property(settingsArb, fc.array(stepArb, { minLength: 1, maxLength: 60 }), (settings, steps) => {
      const m = memoryModels();
      let now = BASE;
      for (const step of steps) {
        now += step.advanceMs;
        if (step.what !== 'check') {
          m.append([{ ...eventOf('EventsIngested', { events: [normalizedEvent({ id: `${step.what}-${now}`, source: { adapter: 'p', instance: step.what, recordId: String(now) } })] }), at: iso(now) }]);
          continue;
        }
        const before = structuredClone(m.monitoring.sources);
        const d = decideSilenceCheck({ monitoring: m.monitoring, alerts: m.alerts }, settings, { now: iso(now) });
        assert.ok(d.ok);
        for (const e of d.events) {
          if (e.type === 'SourceWentSilent') {
            const s = e.data as EventData<'SourceWentSilent'>;
            const prior = before.get(s.source)!;
            assert.ok(!prior.silent || prior.lastSeenAt > prior.silent.lastSeenAt, 'a silence is declared once (again only after the source reported)');
            assert.ok(now - Date.parse(prior.lastSeenAt) > s.thresholdMs, 'only past the threshold');
            assert.ok(s.thresholdMs >= settings.floorSeconds * 1000 && s.thresholdMs <= settings.ceilingSeconds * 1000, 'the threshold stays within floor and ceiling');
            if (s.usualCadenceMs !== null) assert.ok(s.usualCadenceMs >= Math.min(...prior.gaps) && s.usualCadenceMs <= Math.max(...prior.gaps), 'the usual cadence is within the gaps seen');
          }
          if (e.type === 'SourceResumed') {
            const r = e.data as EventData<'SourceResumed'>;
            assert.ok(r.resumedAt > r.silentSince, 'only a source that reported after its silence resumes');
          }
        }
        m.append(d.events.map((e) => ({ ...e, at: iso(now) })));
        const monitoring = m.monitoring;
        const alerts = m.alerts;
        for (const [source, a] of monitoring.sources) {
          const overdue = now - Date.parse(a.lastSeenAt) > silenceThresholdMs(source, a.gaps, settings);
          assert.equal(Boolean(a.silent), overdue || (a.silent !== undefined && a.lastSeenAt <= a.silent.lastSeenAt), `${source}: silent exactly when overdue (or silent and still quiet)`);
          if (overdue) assert.ok(a.silent, `${source} is overdue after a check, so it is declared silent`);
          const open = [...alerts.alerts.values()].filter((x) => x.ruleId === SOURCE_SILENT_RULE && x.groupKey === source && x.status === 'open');
          assert.equal(open.length, a.silent ? 1 : 0, `${source}: one open silence alert while silent, none otherwise`);
          if (a.silent) assert.equal(open[0]!.id, a.silent.alertId);
        }
      }
    }), { numRuns: 300 });
  });

  it('learns the median of the recent gaps, and nothing before minSamples gaps', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1000, max: 1e7 }), { maxLength: 16 }), fc.integer({ min: 1, max: 8 }), (gaps, minSamples) => {
      const usual = usualCadenceMs(gaps, minSamples);
      if (gaps.length < minSamples) return assert.equal(usual, null);
      const below = gaps.filter((g) => g < usual!).length;
      const above = gaps.filter((g) => g > usual!).length;
      assert.ok(below <= gaps.length / 2 && above <= gaps.length / 2, 'half the gaps on each side');
    }));
  });

  it('matches source patterns with * as any run of characters and nothing else', () => {
    fc.assert(fc.property(fc.string({ maxLength: 12 }), fc.string({ maxLength: 12 }), (a, b) => {
      assert.ok(matchesSource(`${a.replaceAll('*', '')}*`, `${a.replaceAll('*', '')}${b}`));
      assert.equal(matchesSource(a.replaceAll('*', ''), b), a.replaceAll('*', '') === b);
    }));
  });
});
