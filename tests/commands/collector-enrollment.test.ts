import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPair, keyFingerprint } from '../../src/kernel/ed25519.js';
import { decideEnroll, decideIssueEnrollmentToken, type Enroll, type IssueEnrollmentToken } from '../../src/commands/collector-enrollment.js';
import type { DomainEvent } from '../../src/commands/decision.js';
import type { CollectorEnrollmentRejected } from '../../src/events/collector-records.js';
import { spec } from '../helpers/decider-spec.js';
import { collectorEnrolled, enrollmentTokenIssued } from '../helpers/event-fixtures.js';

const key1 = generateKeyPair().publicKey;
const key2 = generateKeyPair().publicKey;
const issued = enrollmentTokenIssued({ tokenId: 'cet_1', collectorId: 'web-01', tokenHash: 'hash-1', expiresAt: '2026-11-22T11:00:00.000Z' });
const enrollment = (over: Partial<Enroll> = {}): Enroll => ({
  collectorId: 'web-01', tokenHash: 'hash-1', publicKey: key1, requestId: 'req-1', at: '2026-11-22T10:30:00.000Z', sourceAddress: '192.0.2.10', ...over,
});

/** Asserts that a rejection recorded one CollectorEnrollmentRejected with `reason`, as detectable evidence. */
const refusedFor = (reason: CollectorEnrollmentRejected['reason']) => (events: readonly DomainEvent[]) => {
  assert.equal(events.length, 1);
  assert.equal(events[0]!.type, 'CollectorEnrollmentRejected');
  const data = events[0]!.data as CollectorEnrollmentRejected;
  assert.deepEqual([data.reason, data.collectorId, data.event.id, data.event.class, data.event.attributes.reason], [reason, 'web-01', 'vigil:collector:req-1', 'collector_enrollment_rejected', reason]);
  assert.ok(data.event.entityKeys.includes('ip:192.0.2.10'));
};

const BAD_TOKEN = /^invalid, used or expired enrollment token$/;

describe('decideIssueEnrollmentToken', () => {
  it('records the token by its hash only, with its collector id and expiry', () => {
    const cmd: IssueEnrollmentToken = { tokenId: 'cet_9', collectorId: 'db-01', tokenHash: 'hash-9', expiresAt: '2026-11-22T12:00:00.000Z' };
    spec((_, c: IssueEnrollmentToken) => decideIssueEnrollmentToken(c)).given([]).when(cmd)
      .then([enrollmentTokenIssued(cmd)], { tokenId: 'cet_9', collectorId: 'db-01', expiresAt: '2026-11-22T12:00:00.000Z' });
  });
});

describe('decideEnroll', () => {
  const enroll = spec((m, c: Enroll) => decideEnroll(m.collectors, c));

  it('enrolls a key with a valid token: epoch 1, the sequence starts at 1', () => {
    enroll.given([issued]).when(enrollment())
      .then([collectorEnrolled('web-01', key1, 1, 'cet_1')], { collectorId: 'web-01', epoch: 1, keyFingerprint: keyFingerprint(key1), nextSequence: 1 });
  });

  it('consumes the token: a second use is refused like an unknown token, and the refusal is recorded', () => {
    enroll.given([issued, collectorEnrolled('web-01', key1, 1, 'cet_1')]).when(enrollment({ publicKey: key2 }))
      .thenRejects('unauthenticated', BAD_TOKEN, refusedFor('token_used'));
  });

  it('refuses an unknown token with the same answer as a used one', () => {
    enroll.given([issued]).when(enrollment({ tokenHash: 'hash-unknown' })).thenRejects('unauthenticated', BAD_TOKEN, refusedFor('unknown_token'));
  });

  it('refuses a token at the instant it expires', () => {
    enroll.given([issued]).when(enrollment({ at: '2026-11-22T11:00:00.000Z' })).thenRejects('unauthenticated', BAD_TOKEN, refusedFor('token_expired'));
  });

  it('refuses a token issued for another collector id as forbidden, and says why', () => {
    enroll.given([enrollmentTokenIssued({ collectorId: 'db-01', tokenHash: 'hash-1' })]).when(enrollment())
      .thenRejects('forbidden', /issued for another collector id/, refusedFor('collector_mismatch'));
  });

  it('starts the next epoch when the collector enrolls a new key with a new token', () => {
    enroll.given([issued, collectorEnrolled('web-01', key1, 1, 'cet_1'), enrollmentTokenIssued({ tokenId: 'cet_2', tokenHash: 'hash-2' })])
      .when(enrollment({ tokenHash: 'hash-2', publicKey: key2 }))
      .then([collectorEnrolled('web-01', key2, 2, 'cet_2')], { collectorId: 'web-01', epoch: 2, keyFingerprint: keyFingerprint(key2), nextSequence: 1 });
  });

  it('refuses a key this collector enrolled before, even with a new token', () => {
    enroll.given([issued, collectorEnrolled('web-01', key1, 1, 'cet_1'), enrollmentTokenIssued({ tokenId: 'cet_2', tokenHash: 'hash-2' })])
      .when(enrollment({ tokenHash: 'hash-2', publicKey: key1 }))
      .thenRejects('conflict', /already enrolled for this collector/, refusedFor('key_reused'));
  });
});
