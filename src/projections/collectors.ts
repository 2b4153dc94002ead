import { exhaustive } from '../events/read.js';
import type { CollectorEnrolled, SubmissionResult } from '../events/collector-records.js';
import { instanceProjection } from './types.js';

/** One enrolled collector in its current epoch. */
export interface CollectorView {
  collectorId: string;
  epoch: number;
  /** Raw Ed25519 public key of this epoch, standard base64. */
  publicKey: string;
  keyFingerprint: string;
  /** Fingerprints of every key this collector id ever enrolled (a key is never enrolled twice). */
  usedFingerprints: string[];
  enrolledAt: string;
  /** The enrollment token this epoch's key was enrolled with (a grant's id names its deployment epoch). */
  tokenId?: string;
  /** The last accepted sequence of this epoch (0 before the first). */
  lastSequence: number;
  lastDigest: string | null;
  lastResult: SubmissionResult | null;
  lastAcceptedAt: string | null;
  accepted: number;
  rejected: number;
  lastRejection: { at: string; reason: string } | null;
}

/** One enrollment token (only its hash). */
export interface EnrollmentTokenView {
  tokenId: string;
  collectorId: string;
  tokenHash: string;
  issuedAt: string;
  expiresAt: string;
  usedAt: string | null;
}

/** The collectors read model: collectors by id, enrollment tokens by id and by hash. */
export interface CollectorsState {
  collectors: Map<string, CollectorView>;
  tokens: Map<string, EnrollmentTokenView>;
  tokenByHash: Map<string, string>;
  /**
   * The latest time expired tokens were forgotten at (null: never): a token expiring then or
   * before may be gone from `tokens`, used or not, so an import must not issue it again.
   */
  tokensForgottenThrough: string | null;
}

/** Name of the collectors projection. */
export const COLLECTORS = 'collectors';

function pruneExpired(s: CollectorsState, at: string): void {
  // Expired tokens can never be redeemed; forgetting them keeps the state bounded.
  for (const [id, t] of s.tokens) {
    if (t.expiresAt > at) continue;
    s.tokens.delete(id);
    s.tokenByHash.delete(t.tokenHash);
  }
  // The latest, not the last: a clock set back writes records with earlier times.
  if (s.tokensForgottenThrough === null || at > s.tokensForgottenThrough) s.tokensForgottenThrough = at;
}

function enroll(s: CollectorsState, d: CollectorEnrolled, at: string): void {
  const token = s.tokens.get(d.tokenId);
  if (token) token.usedAt = at;
  const previous = s.collectors.get(d.collectorId);
  s.collectors.set(d.collectorId, {
    collectorId: d.collectorId,
    epoch: d.epoch,
    publicKey: d.publicKey,
    keyFingerprint: d.keyFingerprint,
    usedFingerprints: [...(previous?.usedFingerprints ?? []), d.keyFingerprint],
    enrolledAt: at,
    tokenId: d.tokenId,
    lastSequence: 0,
    lastDigest: null,
    lastResult: null,
    lastAcceptedAt: null,
    accepted: 0,
    rejected: 0,
    lastRejection: null,
  });
}

/**
 * Collectors and their enrollment tokens: per collector the key and epoch, and the last accepted
 * sequence and digest that the next submission is decided against.
 */
export const collectorsProjection = instanceProjection({
  name: COLLECTORS,
  // 3: a collector keeps the id of the token it enrolled with (the deployment snapshot reports its epoch).
  version: 3,
  folds: [
    'CollectorEnrollmentTokenIssued',
    'CollectorEnrolled',
    'CollectorSubmissionAccepted',
    'CollectorSubmissionRejected',
  ],
  initial: (): CollectorsState => ({
    collectors: new Map(),
    tokens: new Map(),
    tokenByHash: new Map(),
    tokensForgottenThrough: null,
  }),
  evolve(s, record) {
    switch (record.type) {
      case 'CollectorEnrollmentTokenIssued': {
        const d = record.data;
        pruneExpired(s, record.at);
        // A token id issued again replaces its token: the replaced token's hash must never redeem
        // the new one (logs written before grant token ids were unique hold such re-issues).
        const replaced = s.tokens.get(d.tokenId);
        if (replaced) s.tokenByHash.delete(replaced.tokenHash);
        s.tokens.set(d.tokenId, { ...d, issuedAt: record.at, usedAt: null });
        s.tokenByHash.set(d.tokenHash, d.tokenId);
        return s;
      }
      case 'CollectorEnrolled':
        enroll(s, record.data, record.at);
        return s;
      case 'CollectorSubmissionAccepted': {
        const d = record.data;
        const c = s.collectors.get(d.collectorId);
        if (!c || c.epoch !== d.epoch) return s;
        Object.assign(c, {
          lastSequence: d.sequence,
          lastDigest: d.digest,
          lastResult: d.result,
          lastAcceptedAt: record.at,
          accepted: c.accepted + 1,
        });
        return s;
      }
      case 'CollectorSubmissionRejected': {
        const d = record.data;
        const c = d.collectorId === null ? undefined : s.collectors.get(d.collectorId);
        if (c) Object.assign(c, { rejected: c.rejected + 1, lastRejection: { at: record.at, reason: d.reason } });
        return s;
      }
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({
    collectors: [...s.collectors.values()],
    tokens: [...s.tokens.values()],
    tokensForgottenThrough: s.tokensForgottenThrough,
  }),
  restore(data) {
    const d = data as {
      collectors: CollectorView[];
      tokens: EnrollmentTokenView[];
      tokensForgottenThrough: string | null;
    };
    return {
      collectors: new Map(d.collectors.map((c) => [c.collectorId, c])),
      tokens: new Map(d.tokens.map((t) => [t.tokenId, t])),
      tokenByHash: new Map(d.tokens.map((t) => [t.tokenHash, t.tokenId])),
      tokensForgottenThrough: d.tokensForgottenThrough,
    };
  },
});
