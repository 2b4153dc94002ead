import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideWitnessRefusal, type WitnessRefusalSeen } from '../../src/commands/witness-refusal.js';
import { WITNESS_REFUSED_RULE } from '../../src/commands/system-alerts.js';
import { eventOf, type EventData } from '../../src/events/union.js';
import { spec } from '../helpers/decider-spec.js';

type Seen = { now: string; seen: WitnessRefusalSeen };
const refusal = spec((m, c: Seen) => decideWitnessRefusal({ witnesses: m.witnesses, alerts: m.alerts }, c.seen, { now: c.now }));
const seen = (size: number, over: Partial<WitnessRefusalSeen> = {}): WitnessRefusalSeen => ({
  witness: 'witness.example/w1', url: 'https://witness.example', size, witnessSize: 90, status: 422, reason: 'the tree is not consistent with what the witness cosigned', answer: 'refusing: not consistent', ...over,
});

describe('decideWitnessRefusal', () => {
  it('records the refusal and raises a critical vigil.witness-refused alert naming the witness, the size and its answer', () => {
    refusal.given([]).when({ now: '2026-11-22T10:00:00.000Z', seen: seen(120) }).thenAccepts((events, raised) => {
      assert.equal(raised, true);
      const recorded = events[0]!.data as EventData<'WitnessRefused'>;
      assert.deepEqual({ ...recorded, alertId: '' }, { witness: 'witness.example/w1', url: 'https://witness.example', size: 120, witnessSize: 90, status: 422, reason: seen(0).reason, answer: 'refusing: not consistent', alertId: '' });
      const alert = events[1]!.data as EventData<'AlertRaised'>;
      assert.equal(alert.alertId, recorded.alertId);
      assert.equal(alert.ruleId, WITNESS_REFUSED_RULE);
      assert.equal(alert.level, 'critical');
      assert.deepEqual(alert.tags, ['vigil.self-monitoring']);
      assert.match(alert.title, /Witness witness\.example\/w1 refused the checkpoint of 120 records/);
      assert.ok("fields" in alert.matchReason);
      const facts = Object.fromEntries(alert.matchReason.fields.map((f) => [f.field, f.value]));
      assert.deepEqual(facts, { witness: 'witness.example/w1', url: 'https://witness.example', size: 120, witnessSize: 90, status: 422, reason: seen(0).reason, answer: 'refusing: not consistent' });
    });
  });

  it('says nothing for the same witness and size again: one alert, not one per push', () => {
    const first = refusal.given([]).when({ now: '2026-11-22T10:00:00.000Z', seen: seen(120) }).thenAccepts(() => {});
    refusal.given(first.events).when({ now: '2026-11-22T10:01:00.000Z', seen: seen(120) }).then([], false);
  });

  it('says nothing for a later size while the witness\'s alert is open, and alerts again once it was dismissed', () => {
    const first = refusal.given([]).when({ now: '2026-11-22T10:00:00.000Z', seen: seen(120) }).thenAccepts(() => {});
    refusal.given(first.events).when({ now: '2026-11-22T10:01:00.000Z', seen: seen(130) }).then([], false);
    const alertId = (first.events[0]!.data as EventData<'WitnessRefused'>).alertId;
    const dismissed = eventOf('AlertReviewed', { alertId, from: 'open', to: 'dismissed', reason: 'restored the store', principal: 'admin', authentication: 'bearer' });
    refusal.given([...first.events, dismissed]).when({ now: '2026-11-22T11:00:00.000Z', seen: seen(130) }).thenAccepts((events, raised) => {
      assert.equal(raised, true);
      assert.equal((events[0]!.data as EventData<'WitnessRefused'>).size, 130);
      assert.notEqual((events[0]!.data as EventData<'WitnessRefused'>).alertId, alertId);
    });
  });

  it('keeps each witness apart, and cuts a long answer to 512 characters', () => {
    const first = refusal.given([]).when({ now: '2026-11-22T10:00:00.000Z', seen: seen(120) }).thenAccepts(() => {});
    refusal.given(first.events).when({ now: '2026-11-22T10:00:00.000Z', seen: seen(120, { witness: 'w2.example/x', answer: 'x'.repeat(5000) }) }).thenAccepts((events, raised) => {
      assert.equal(raised, true);
      assert.equal((events[0]!.data as EventData<'WitnessRefused'>).answer.length, 512);
    });
  });
});
