import { exhaustive } from '../../events/read.js';
import type { AuthorityRecord } from '../../events/union.js';
import { authorityProjection } from '../../projections/types.js';

/** Setup session states (spec 3.2; names other than `connected` are ours). */
export type SessionStatus = 'created' | 'connected' | 'claimed' | 'proven' | 'completed';

/** One setup session as the authority sees it. */
export interface SessionView {
  id: string;
  kind: 'setup' | 'recovery';
  tenantId: string;
  userId: string;
  status: SessionStatus;
  createdAt: string;
  expiresAt: string;
  /** Hash of the setup token while it is unconsumed. */
  setupTokenHash?: string;
  connectedAt?: string;
  claimedAt?: string;
  claimSeq?: number;
  deploymentId?: string;
  sessionTokenHash?: string;
  sessionTokenExpiresAt?: string;
  challenge?: string;
  provenAt?: string;
  completedAt?: string;
  phases: Array<{ phase: string; index: number; at: string; detail?: string }>;
  bootstrapKey?: { fingerprint: string; publicKeySpkiPem: string; publishedAt: string; label?: string };
}

/** The setup sessions read model: sessions by id plus lookups by token hash. */
export interface SessionsState {
  byId: Record<string, SessionView>;
  /** setup token hash -> session id (removed once consumed). */
  bySetupToken: Record<string, string>;
  /** session token hash -> session id. */
  bySessionToken: Record<string, string>;
}

function claimed(
  s: SessionsState,
  r: AuthorityRecord,
  sessionId: string,
  d: { deploymentId: string; sessionTokenHash: string; sessionTokenExpiresAt: string; challenge: string },
): void {
  const view = s.byId[sessionId];
  if (!view) return;
  Object.assign(view, {
    status: 'claimed',
    claimedAt: r.at,
    claimSeq: r.seq,
    deploymentId: d.deploymentId,
    sessionTokenHash: d.sessionTokenHash,
    sessionTokenExpiresAt: d.sessionTokenExpiresAt,
    challenge: d.challenge,
  });
  s.bySessionToken[d.sessionTokenHash] = sessionId;
}

/** Folds setup-session records into the sessions read model. */
export const setupSessionsProjection = authorityProjection({
  name: 'setup-sessions',
  version: 1,
  folds: [
    'SetupSessionCreated',
    'SetupSessionConnected',
    'SetupSessionClaimed',
    'RecoveryClaimed',
    'SetupSessionProven',
    'BootstrapKeyPublished',
    'SetupPhaseReported',
  ],
  initial: (): SessionsState => ({ byId: {}, bySetupToken: {}, bySessionToken: {} }),
  evolve(s, r) {
    switch (r.type) {
      case 'SetupSessionCreated': {
        const d = r.data;
        s.byId[d.sessionId] = {
          id: d.sessionId,
          kind: 'setup',
          tenantId: d.tenantId,
          userId: d.userId,
          status: 'created',
          createdAt: r.at,
          expiresAt: d.expiresAt,
          setupTokenHash: d.tokenHash,
          phases: [],
        };
        s.bySetupToken[d.tokenHash] = d.sessionId;
        return s;
      }
      case 'SetupSessionConnected': {
        const view = s.byId[r.data.sessionId];
        if (view && view.status === 'created') {
          view.status = 'connected';
          view.connectedAt = r.at;
        }
        return s;
      }
      case 'SetupSessionClaimed': {
        const d = r.data;
        const view = s.byId[d.sessionId];
        if (view?.setupTokenHash) {
          delete s.bySetupToken[view.setupTokenHash];
          delete view.setupTokenHash;
        }
        claimed(s, r, d.sessionId, d);
        return s;
      }
      case 'RecoveryClaimed': {
        const d = r.data;
        s.byId[d.sessionId] = {
          id: d.sessionId,
          kind: 'recovery',
          tenantId: d.tenantId,
          userId: d.userId,
          status: 'claimed',
          createdAt: r.at,
          expiresAt: d.sessionTokenExpiresAt,
          phases: [],
        };
        claimed(s, r, d.sessionId, d);
        return s;
      }
      case 'SetupSessionProven': {
        const view = s.byId[r.data.sessionId];
        if (view) {
          view.status = 'proven';
          view.provenAt = r.at;
        }
        return s;
      }
      case 'BootstrapKeyPublished': {
        const d = r.data;
        const view = s.byId[d.sessionId];
        if (view)
          view.bootstrapKey = {
            fingerprint: d.fingerprint,
            publicKeySpkiPem: d.publicKeySpkiPem,
            publishedAt: r.at,
            ...(d.label ? { label: d.label } : {}),
          };
        return s;
      }
      case 'SetupPhaseReported': {
        const d = r.data;
        const view = s.byId[d.sessionId];
        if (!view) return s;
        view.phases.push({ phase: d.phase, index: d.index, at: r.at, ...(d.detail ? { detail: d.detail } : {}) });
        if (d.phase === 'completed') {
          view.status = 'completed';
          view.completedAt = r.at;
        }
        return s;
      }
      default:
        return exhaustive(r, s);
    }
  },
});

/** The current phase of a session (the last reported), or undefined. */
export function currentPhase(view: SessionView): { phase: string; index: number } | undefined {
  return view.phases.at(-1);
}
