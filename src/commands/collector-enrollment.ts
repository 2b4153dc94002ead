import { keyFingerprint } from '../kernel/ed25519.js';
import { encodeBase64 } from '../kernel/strict-base64.js';
import { RecordType } from '../events/record-types.js';
import { nanosFromIso } from '../kernel/time.js';
import type { CollectorsState } from '../projections/collectors.js';
import type {
  CollectorEnrolled,
  CollectorEnrollmentRejected,
  CollectorEnrollmentTokenIssued,
  EnrollmentRejectionReason,
} from '../events/collector-records.js';
import { refusalEvent } from './collector-rejection.js';
import { accept, reject, type Decision, type RejectionKind } from './decision.js';

/** Issue an enrollment token: the caller draws the id and token and passes only the token's hash. */
export interface IssueEnrollmentToken {
  readonly tokenId: string;
  readonly collectorId: string;
  readonly tokenHash: string;
  readonly expiresAt: string;
}

/** What issuing answers (the route adds the plaintext token, shown once). */
export interface IssuedToken {
  readonly tokenId: string;
  readonly collectorId: string;
  readonly expiresAt: string;
}

/** Records a new single-use enrollment token for a collector id. */
export function decideIssueEnrollmentToken(cmd: IssueEnrollmentToken): Decision<IssuedToken> {
  const data: CollectorEnrollmentTokenIssued = {
    tokenId: cmd.tokenId,
    collectorId: cmd.collectorId,
    tokenHash: cmd.tokenHash,
    expiresAt: cmd.expiresAt,
  };
  return accept([{ type: RecordType.CollectorEnrollmentTokenIssued, data }], {
    tokenId: cmd.tokenId,
    collectorId: cmd.collectorId,
    expiresAt: cmd.expiresAt,
  });
}

/** An enrollment request, validated at the edge (the key is already a sound Ed25519 point). */
export interface Enroll {
  readonly collectorId: string;
  readonly tokenHash: string;
  readonly publicKey: Uint8Array;
  readonly requestId: string;
  readonly at: string;
  readonly sourceAddress: string;
}

/** What enrollment answers. */
export interface Enrollment {
  readonly collectorId: string;
  readonly epoch: number;
  readonly keyFingerprint: string;
  readonly nextSequence: 1;
}

const KIND_OF: Readonly<Record<EnrollmentRejectionReason, RejectionKind>> = {
  unknown_token: 'unauthenticated',
  token_used: 'unauthenticated',
  token_expired: 'unauthenticated',
  collector_mismatch: 'forbidden',
  key_reused: 'conflict',
  malformed: 'invalid',
};

/** One answer for every token problem, so a caller cannot tell a used token from an unknown one. */
const BAD_TOKEN = 'invalid, used or expired enrollment token';

function refuse(cmd: Enroll, reason: EnrollmentRejectionReason, message: string): Decision<never> {
  const event = refusalEvent('collector_enrollment_rejected', reason, {
    requestId: cmd.requestId,
    at: cmd.at,
    sourceAddress: cmd.sourceAddress,
    collectorId: cmd.collectorId,
    message,
  });
  const data: CollectorEnrollmentRejected = { reason, collectorId: cmd.collectorId, event };
  const shown = KIND_OF[reason] === 'unauthenticated' ? BAD_TOKEN : message;
  return reject(KIND_OF[reason], shown, { events: [{ type: RecordType.CollectorEnrollmentRejected, data }] });
}

/** Whether instant `a` is strictly before `b` (as instants, not text); false when either is unreadable. */
function isBefore(a: string, b: string): boolean {
  const x = nanosFromIso(a),
    y = nanosFromIso(b);
  return x !== undefined && y !== undefined && x < y;
}

/**
 * Redeems an enrollment token: it must exist, be unused and unexpired, and name this collector id;
 * the key must be new to this collector. The token is consumed by the first valid use (the single
 * writer decides one command at a time). A new epoch begins: new key, sequence restarts at 1.
 */
export function decideEnroll(s: CollectorsState, cmd: Enroll): Decision<Enrollment> {
  const tokenId = s.tokenByHash.get(cmd.tokenHash);
  const token = tokenId === undefined ? undefined : s.tokens.get(tokenId);
  if (!token) return refuse(cmd, 'unknown_token', 'unknown enrollment token');
  if (token.usedAt !== null) return refuse(cmd, 'token_used', `enrollment token ${token.tokenId} was already used`);
  if (!isBefore(cmd.at, token.expiresAt))
    return refuse(cmd, 'token_expired', `enrollment token ${token.tokenId} expired`);
  if (token.collectorId !== cmd.collectorId)
    return refuse(cmd, 'collector_mismatch', 'this enrollment token was issued for another collector id');
  const fingerprint = keyFingerprint(cmd.publicKey);
  const previous = s.collectors.get(cmd.collectorId);
  if (previous?.usedFingerprints.includes(fingerprint))
    return refuse(
      cmd,
      'key_reused',
      'this key was already enrolled for this collector; a new enrollment needs a new key',
    );
  const epoch = (previous?.epoch ?? 0) + 1;
  const data: CollectorEnrolled = {
    collectorId: cmd.collectorId,
    epoch,
    tokenId: token.tokenId,
    publicKey: encodeBase64(cmd.publicKey),
    keyFingerprint: fingerprint,
  };
  return accept([{ type: RecordType.CollectorEnrolled, data }], {
    collectorId: cmd.collectorId,
    epoch,
    keyFingerprint: fingerprint,
    nextSequence: 1,
  });
}
