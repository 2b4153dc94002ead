import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventOf } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { decodeRecord, encodeRecord } from '../../src/log/record.js';
import { witnessesProjection, type WitnessesState } from '../../src/projections/witnesses.js';

const refused = (seq: number, witness: string, size: number, alertId: string): LogRecord => {
  const e = eventOf('WitnessRefused', { witness, url: 'https://w.example', size, status: 422, reason: 'forked', answer: 'no', alertId });
  return decodeRecord(encodeRecord({ seq, at: '2026-12-07T12:00:00.000Z', type: e.type, data: e.data, prev: '' }));
};

describe('the witnesses projection', () => {
  it('keeps each witness\'s last refusal, and a checkpoint of it restores the same view', () => {
    const records = [refused(1, 'w1', 10, 'al_1'), refused(2, 'w2', 12, 'al_2'), refused(3, 'w1', 20, 'al_3')];
    const view = records.reduce((s, r) => witnessesProjection.evolve(s, r), witnessesProjection.initial() as WitnessesState);
    assert.deepEqual([...view.refusals], [['w1', { size: 20, alertId: 'al_3' }], ['w2', { size: 12, alertId: 'al_2' }]]);
    const stored = decodeRecord(encodeRecord({ seq: 9, at: '2026-12-07T12:00:00.000Z', type: 'Snapshot', data: witnessesProjection.snapshot!(view), prev: '' })).data;
    assert.deepEqual(witnessesProjection.restore!(stored), view);
  });
});
