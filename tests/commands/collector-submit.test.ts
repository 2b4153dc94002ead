import { submissionSlice } from '../../src/commands/slices.js';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPair } from '../../src/kernel/ed25519.js';
import { openEnvelope, type OpenedEnvelope } from '../../src/events/collector-protocol/open-envelope.js';
import { encodeBase64 } from '../../src/kernel/strict-base64.js';
import type { CollectorSubmissionAccepted, CollectorSubmissionRejected } from '../../src/events/collector-records.js';
import { decideSubmission, factCounts, type SubmitEnvelope } from '../../src/commands/collector-submit.js';
import type { DomainEvent } from '../../src/commands/decision.js';
import { eventOf } from '../../src/events/union.js';
import { spec } from '../helpers/decider-spec.js';
import { collectorEnrolled, enrollmentTokenIssued, eventsIngested, normalizedEvent } from '../helpers/event-fixtures.js';
import { envelopeText, makePayload, type TestKey } from '../collector/helpers.js';

const key1: TestKey = generateKeyPair();
const key2: TestKey = generateKeyPair();
const AT = '2026-11-22T10:30:00.000Z';

/** A freshly opened envelope of `web-01` at `sequence` (the decider completes its events in place, so one per spec). */
function opened(sequence: number, key = key1, n = 1, prefix?: string): OpenedEnvelope {
  const result = openEnvelope(Buffer.from(envelopeText(makePayload('web-01', sequence, n, prefix), key)));
  if (!result.ok) throw new Error(result.message);
  return result.envelope;
}

const submit = (envelope: OpenedEnvelope, over: Partial<SubmitEnvelope> = {}): SubmitEnvelope =>
  ({ opened: { ok: true, envelope }, principal: 'collector-user', requestId: 'req-1', at: AT, sourceAddress: '192.0.2.10', ...over });

/** The accepted-submission fact of an envelope (its stored events are not what these specs are about). */
function accepted(envelope: OpenedEnvelope, epoch = 1) {
  const { payload } = envelope;
  return eventOf('CollectorSubmissionAccepted', {
    collectorId: payload.collectorId, epoch, sequence: payload.sequence, digest: envelope.digest, signature: encodeBase64(envelope.signature),
    collectedAt: payload.collectedAt, facts: payload.facts, events: [],
    result: { collectorId: payload.collectorId, sequence: payload.sequence, graph: factCounts(payload.facts), acceptedEvents: payload.events.length },
  });
}

/** Asserts that a rejection recorded one CollectorSubmissionRejected with `reason` (and the sequences it names). */
const refusedFor = (reason: CollectorSubmissionRejected['reason'], collectorId: string | null = 'web-01') => (events: readonly DomainEvent[]) => {
  assert.equal(events.length, 1);
  assert.equal(events[0]!.type, 'CollectorSubmissionRejected');
  const data = events[0]!.data as CollectorSubmissionRejected;
  assert.deepEqual([data.reason, data.collectorId, data.event.activity, data.event.attributes.principal], [reason, collectorId, reason, 'collector-user']);
};

const enrolled = [enrollmentTokenIssued(), collectorEnrolled('web-01', key1.publicKey, 1)];
const submission = spec((m, c: SubmitEnvelope) => decideSubmission(submissionSlice(m), c));

describe('decideSubmission', () => {
  it('accepts the next sequence: its facts, its events as collector evidence, and the submission result', () => {
    const envelope = opened(1, key1, 2);
    submission.given(enrolled).when(submit(envelope)).thenAccepts((events, result) => {
      assert.deepEqual(result, { collectorId: 'web-01', sequence: 1, graph: { entities: 1, relationships: 1 }, acceptedEvents: 2 });
      assert.deepEqual(events.map((e) => e.type), ['CollectorSubmissionAccepted']);
      const data = events[0]!.data as CollectorSubmissionAccepted;
      assert.deepEqual([data.epoch, data.sequence, data.digest, data.signature], [1, 1, envelope.digest, encodeBase64(envelope.signature)]);
      assert.deepEqual(data.events.map((e) => [e.id, e.category, e.outcome, e.source.adapter, e.source.instance]), [
        ['web-01-s1-e0', 'identity', 'failure', 'collector', 'web-01'], ['web-01-s1-e1', 'identity', 'success', 'collector', 'web-01'],
      ]);
    });
  });

  it('answers an exact retry of the last accepted envelope with its original result and records nothing', () => {
    const envelope = opened(1);
    const first = accepted(envelope);
    submission.given([...enrolled, first]).when(submit(opened(1))).then([], first.data.result);
  });

  it('refuses another payload under the last accepted sequence as equivocation, naming the expected sequence', () => {
    const r = submission.given([...enrolled, accepted(opened(1))]).when(submit(opened(1, key1, 1, 'other')))
      .thenRejects('conflict', /sequence 1 was already accepted with a different payload/, refusedFor('equivocation'));
    assert.deepEqual(r.details, { reason: 'equivocation', expectedSequence: 2 });
  });

  it('refuses a sequence below the last accepted one as a replay', () => {
    const r = submission.given([...enrolled, accepted(opened(1)), accepted(opened(2))]).when(submit(opened(1)))
      .thenRejects('conflict', /older than the last accepted 2/, refusedFor('replay'));
    assert.deepEqual(r.details, { reason: 'replay', expectedSequence: 3 });
  });

  it('refuses a sequence that skips ahead as a gap, naming the expected sequence', () => {
    const r = submission.given(enrolled).when(submit(opened(3))).thenRejects('conflict', /expected sequence 1, got 3/, refusedFor('sequence_gap'));
    assert.deepEqual(r.details, { reason: 'sequence_gap', expectedSequence: 1 });
  });

  it('refuses an envelope signed by another key than the enrolled one', () => {
    submission.given(enrolled).when(submit(opened(1, key2))).thenRejects('unauthenticated', /does not verify/, refusedFor('bad_signature'));
  });

  it('after re-enrollment, refuses the previous epoch\'s key and restarts the sequence at 1 for the new one', () => {
    const reenrolled = [...enrolled, accepted(opened(1)), accepted(opened(2)), enrollmentTokenIssued({ tokenId: 'cet_2', tokenHash: 'hash-2' }), collectorEnrolled('web-01', key2.publicKey, 2, 'cet_2')];
    submission.given(reenrolled).when(submit(opened(3))).thenRejects('unauthenticated', /does not verify/, refusedFor('bad_signature'));
    submission.given(reenrolled).when(submit(opened(1, key2))).thenAccepts((events) => {
      const data = events[0]!.data as CollectorSubmissionAccepted;
      assert.deepEqual([data.epoch, data.sequence], [2, 1]);
    });
  });

  it('refuses a collector that never enrolled as forbidden', () => {
    submission.given([]).when(submit(opened(1))).thenRejects('forbidden', /web-01 is not enrolled/, refusedFor('unknown_collector'));
  });

  it('refuses a credential bound to another collector before looking at the signature', () => {
    submission.given(enrolled).when(submit(opened(1, key2), { boundCollectorId: 'db-01' })).thenRejects('forbidden', /bound to another collector/, refusedFor('collector_mismatch'));
  });

  it('refuses a malformed envelope as invalid, with its issues, recording who it claimed to be', () => {
    const r = submission.given(enrolled).when(submit(opened(1), { opened: openEnvelope(Buffer.from('{"algorithm":"Ed25519","payload":{"collectorId":"web-01"},"signature":""}')) }))
      .thenRejects('invalid', /malformed envelope/, refusedFor('malformed'));
    assert.ok((r.issues ?? []).length > 0);
  });

  it('refuses a submission whose event id is already stored with other content', () => {
    const clash = normalizedEvent({ id: 'web-01-s1-e0' });
    const r = submission.given([...enrolled, eventsIngested(clash)]).when(submit(opened(1))).thenRejects('invalid', /already stored with different content/, refusedFor('malformed'));
    assert.deepEqual(r.issues, ['events: id "web-01-s1-e0" already stored with different content']);
  });
});
