import type { Projection } from '../../projections/types.js';
import { SetupRecordType as T, type BrowserSignedIn, type BrowserSignedOut } from '../events.js';

/** A signed-in browser: who it is, its CSRF token hash and when the session ends. */
export interface BrowserSessionView { tenantId: string; userId: string; csrfHash: string; expiresAt: string }

/** Browser sessions by the hash of their cookie value. */
export interface BrowserSessionsState { byHash: Record<string, BrowserSessionView> }

/** Folds sign-ins and sign-outs; expiry is checked against the request time, not folded. */
export const browserSessionsProjection: Projection<BrowserSessionsState> = {
  name: 'browser-sessions',
  version: 1,
  initial: () => ({ byHash: {} }),
  evolve(s, r) {
    if (r.type === T.BrowserSignedIn) {
      const d = r.data as BrowserSignedIn;
      // Expired sessions are dropped as new ones arrive, so the view stays bounded.
      for (const [hash, view] of Object.entries(s.byHash)) if (view.expiresAt <= r.at) delete s.byHash[hash];
      s.byHash[d.browserSessionHash] = { tenantId: d.tenantId, userId: d.userId, csrfHash: d.csrfHash, expiresAt: d.expiresAt };
    } else if (r.type === T.BrowserSignedOut) {
      delete s.byHash[(r.data as BrowserSignedOut).browserSessionHash];
    }
    return s;
  },
};
