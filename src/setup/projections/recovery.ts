import { exhaustive } from '../../events/read.js';
import { authorityProjection } from '../../projections/types.js';

/** One recovery token: its hash (for claims), its ciphertext (for the owner), and what became of it. */
export interface RecoveryView {
  id: string;
  deploymentId: string;
  tokenHash: string;
  ciphertext: string;
  keyId: string;
  issuedAt: string;
  claimedAt?: string;
  claimSessionId?: string;
  notice?: { to: string; sentAt: string; messageId: string };
  noticeFailures: number;
  lastNoticeError?: string;
  revealedAt?: string;
}

/** The recovery read model. */
export interface RecoveryState {
  byId: Record<string, RecoveryView>;
  /** token hash -> recovery id (kept after use, so a reused token is recognised and refused). */
  byTokenHash: Record<string, string>;
}

/** Folds recovery records into the recovery read model. */
export const recoveryProjection = authorityProjection({
  name: 'recovery',
  version: 1,
  folds: [
    'RecoveryTokenIssued',
    'RecoveryNoticeSent',
    'RecoveryNoticeFailed',
    'RecoveryTokenRevealed',
    'RecoveryClaimed',
  ],
  initial: (): RecoveryState => ({ byId: {}, byTokenHash: {} }),
  evolve(s, r) {
    switch (r.type) {
      case 'RecoveryTokenIssued': {
        const d = r.data;
        s.byId[d.recoveryId] = {
          id: d.recoveryId,
          deploymentId: d.deploymentId,
          tokenHash: d.tokenHash,
          ciphertext: d.ciphertext,
          keyId: d.keyId,
          issuedAt: r.at,
          noticeFailures: 0,
        };
        s.byTokenHash[d.tokenHash] = d.recoveryId;
        return s;
      }
      case 'RecoveryNoticeSent': {
        const d = r.data;
        const view = s.byId[d.recoveryId];
        if (view) view.notice = { to: d.to, sentAt: r.at, messageId: d.messageId };
        return s;
      }
      case 'RecoveryNoticeFailed': {
        const d = r.data;
        const view = s.byId[d.recoveryId];
        if (view) {
          view.noticeFailures++;
          view.lastNoticeError = d.reason;
        }
        return s;
      }
      case 'RecoveryTokenRevealed': {
        const view = s.byId[r.data.recoveryId];
        if (view) view.revealedAt = r.at;
        return s;
      }
      case 'RecoveryClaimed': {
        const d = r.data;
        const view = s.byId[d.recoveryId];
        if (view) {
          view.claimedAt = r.at;
          view.claimSessionId = d.sessionId;
        }
        return s;
      }
      default:
        return exhaustive(r, s);
    }
  },
});

/** The open (unclaimed) recovery of a deployment, if any. */
export function openRecovery(s: RecoveryState, recoveryIds: readonly string[]): RecoveryView | undefined {
  for (const id of recoveryIds) {
    const view = s.byId[id];
    if (view && !view.claimedAt) return view;
  }
  return undefined;
}
