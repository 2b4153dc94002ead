import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { generateKeyPair } from '../../src/kernel/ed25519.js';
import { openEnvelope } from '../../src/events/collector-protocol/open-envelope.js';
import { decideSubmission } from '../../src/commands/collector-submit.js';
import type { CollectorEnrolled, SubmissionResult } from '../../src/events/collector-records.js';
import { RecordType } from '../../src/events/record-types.js';
import { collectorsProjection, type CollectorsState } from '../../src/projections/collectors.js';
import { writeModelsOf, type WriteModels } from '../../src/projections/models.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { envelopeText, makePayload } from './helpers.js';
import { submissionSlice } from '../../src/commands/slices.js';

/** Read models holding only the collectors state (no stored evidence). */
function modelsOver(state: CollectorsState): WriteModels {
  return writeModelsOf({
    state: <S>() => state as S,
    index: { get: () => undefined },
    db: () => { throw new Error('no databases in this test'); },
    seq: () => 0,
    record: () => undefined,
  });
}

/** The reference: the list of accepted payload variants, one per sequence number. */
type Expected = { kind: 'accepted' | 'retry' } | { kind: 'refused'; reason: string; expectedSequence?: number };

function reference(accepted: number[], seq: number, variant: number, forged: boolean): Expected {
  if (forged) return { kind: 'refused', reason: 'bad_signature' };
  const n = accepted.length;
  if (seq === n + 1) { accepted.push(variant); return { kind: 'accepted' }; }
  if (seq === n && n > 0) return accepted[n - 1] === variant ? { kind: 'retry' } : { kind: 'refused', reason: 'equivocation', expectedSequence: n + 1 };
  return { kind: 'refused', reason: seq < n ? 'replay' : 'sequence_gap', expectedSequence: n + 1 };
}

describe('collector sequence state machine', () => {
  const key = generateKeyPair();
  const forger = generateKeyPair();
  const enrolled: CollectorEnrolled = { collectorId: 'c1', epoch: 1, tokenId: 't1', publicKey: Buffer.from(key.publicKey).toString('base64'), keyFingerprint: 'f' };

  it('agrees with a list-of-accepted-payloads reference model over random submission streams', () => {
    const step = fc.record({ delta: fc.integer({ min: -3, max: 2 }), variant: fc.integer({ min: 0, max: 1 }), forged: fc.integer({ min: 0, max: 5 }).map((n) => n === 0) });
    fc.assert(fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
      let state = collectorsProjection.initial();
      let seq = 0;
      const rec = (type: string, data: unknown): LogRecord => ({ seq: ++seq, at: '2026-11-22T10:00:00.000Z', type, data, prev: '' });
      state = collectorsProjection.evolve(state, rec(RecordType.CollectorEnrolled, enrolled));
      const accepted: number[] = [];
      const results = new Map<number, SubmissionResult>();
      for (const [i, s] of steps.entries()) {
        const sequence = Math.max(1, accepted.length + s.delta);
        const payload = makePayload('c1', sequence, 1, `v${s.variant}-s${sequence}`);
        const opened = openEnvelope(Buffer.from(envelopeText(payload, s.forged ? forger : key)));
        const want = reference(accepted, sequence, s.variant, s.forged);
        const d = decideSubmission(submissionSlice(modelsOver(state)), { opened, requestId: `r${i}`, at: '2026-11-22T10:00:00.000Z', sourceAddress: '127.0.0.1' });
        if (want.kind === 'refused') {
          assert.equal(d.ok, false);
          if (d.ok) return;
          assert.equal(d.rejection.details?.reason, want.reason);
          assert.equal(d.rejection.details?.expectedSequence, want.expectedSequence);
        } else {
          assert.equal(d.ok, true, JSON.stringify(!d.ok && d.rejection));
          if (!d.ok) return;
          if (want.kind === 'retry') {
            assert.deepEqual(d.events, []);
            assert.deepEqual(d.result, results.get(sequence));
          } else {
            assert.equal(d.events.length, 1);
            results.set(sequence, d.result);
          }
        }
        for (const e of d.events ?? []) state = collectorsProjection.evolve(state, rec(e.type, e.data));
        assert.equal(state.collectors.get('c1')!.lastSequence, accepted.length);
      }
      // The state folded from a checkpoint equals the live one.
      const restored = collectorsProjection.restore!(JSON.parse(JSON.stringify(collectorsProjection.snapshot!(state))));
      assert.deepEqual(restored, state);
    }), { numRuns: 150 });
  });
});
