import { openEventStore, type EventStore } from '../commands/event-store.js';
import { AUTHORITY_PROJECTIONS } from './models.js';

/** The authority's store: its own log, read models and single writer (never the instance's). */
export type AuthorityStore = EventStore;

/** Opens the authority store at `path` and folds its log into the authority's read models. */
export function openAuthorityStore(path: string, onFatal?: (err: Error) => void): Promise<AuthorityStore> {
  return openEventStore(path, { projections: AUTHORITY_PROJECTIONS, indexes: [], ...(onFatal ? { onFatal } : {}) });
}
