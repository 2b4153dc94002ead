import { exhaustive } from '../../events/read.js';
import { authorityProjection } from '../../projections/types.js';

/** A signed-in browser: who it is, its CSRF token hash and when the session ends. */
export interface BrowserSessionView {
  tenantId: string;
  userId: string;
  csrfHash: string;
  expiresAt: string;
}

/** Browser sessions by the hash of their cookie value. */
export interface BrowserSessionsState {
  byHash: Record<string, BrowserSessionView>;
}

/** Folds sign-ins and sign-outs; expiry is checked against the request time, not folded. */
export const browserSessionsProjection = authorityProjection({
  name: 'browser-sessions',
  version: 1,
  folds: ['BrowserSignedIn', 'BrowserSignedOut'],
  initial: (): BrowserSessionsState => ({ byHash: {} }),
  evolve(s, r) {
    switch (r.type) {
      case 'BrowserSignedIn': {
        const d = r.data;
        // Expired sessions are dropped as new ones arrive, so the view stays bounded.
        for (const [hash, view] of Object.entries(s.byHash)) if (view.expiresAt <= r.at) delete s.byHash[hash];
        s.byHash[d.browserSessionHash] = {
          tenantId: d.tenantId,
          userId: d.userId,
          csrfHash: d.csrfHash,
          expiresAt: d.expiresAt,
        };
        return s;
      }
      case 'BrowserSignedOut':
        delete s.byHash[r.data.browserSessionHash];
        return s;
      default:
        return exhaustive(r, s);
    }
  },
});
