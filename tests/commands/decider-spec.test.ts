import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { accept, reject } from '../../src/commands/decision.js';
import type { CollectorsState } from '../../src/projections/collectors.js';
import { hasEvent } from '../../src/projections/evidence.js';
import { memoryModels, spec } from '../helpers/decider-spec.js';
import { collectorEnrolled, enrollmentTokenIssued, eventsIngested, normalizedEvent } from '../helpers/event-fixtures.js';

const ruleOff = { type: 'RuleEnabledChanged', data: { ruleId: 'r1', enabled: false } };

describe('decider specs', () => {
  it('fold the given events into the real read models, the evidence index included', () => {
    const models = memoryModels();
    models.append([enrollmentTokenIssued(), collectorEnrolled('web-01', new Uint8Array(32).fill(7)), eventsIngested(normalizedEvent({ id: 'evt-9' }))]);
    assert.equal(models.collectors.collectors.get('web-01')?.epoch, 1);
    assert.equal(models.collectors.tokens.get('cet_1')?.usedAt, '2026-11-22T10:00:00.000Z');
    assert.ok(hasEvent(models, 'evt-9'));
    assert.ok(!hasEvent(models, 'evt-8'));
    assert.equal(models.record(3)?.type, 'EventsIngested');
    assert.equal(models.seq(), 3);
  });

  it('fail when the events differ, when a rejection was expected, or when an acceptance was', () => {
    assert.throws(() => spec(() => accept([ruleOff], null)).given([]).when(undefined).then([]), /deepStrictEqual|Expected values/);
    assert.throws(() => spec(() => accept([ruleOff], null)).given([]).when(undefined).thenRejects('conflict'), /expected a conflict rejection/);
    assert.throws(() => spec(() => reject('conflict', 'no')).given([]).when(undefined).then([]), /rejected: conflict: no/);
    assert.throws(() => spec(() => reject('conflict', 'no')).given([]).when(undefined).thenRejects('not_found'), /no/);
  });

  it('fail when a decider emits data that is not the stored shape of its type, or records events a rejection did not state', () => {
    const off = { type: 'RuleEnabledChanged', data: { ruleId: 'r1', enabled: 'no' } };
    assert.throws(() => spec(() => accept([off], null)).given([]).when(undefined).then([off]), /stored shape/);
    assert.throws(() => spec(() => reject('conflict', 'no', { events: [ruleOff] })).given([]).when(undefined).thenRejects('conflict'), /events the rejection records/);
  });
});
