import { openEventStore, type EventStore } from '../commands/event-store.js';
import { createPipeline, type Pipeline } from '../commands/pipeline.js';
import { AUTHORITY_PROJECTIONS, authorityModelsOf, type AuthorityModels } from './models.js';

/** The authority's store: its own log, read models and write pipeline (never the instance's). */
export interface AuthorityStore extends EventStore<AuthorityModels> {
  /** The authority's write pipeline; its log holds no evidence, so it runs no detection. */
  readonly pipeline: Pipeline<AuthorityModels>;
}

/** Opens the authority store at `path` and folds its log into the authority's read models. */
export async function openAuthorityStore(path: string, onFatal?: (err: Error) => void): Promise<AuthorityStore> {
  const es = await openEventStore(path, {
    projections: AUTHORITY_PROJECTIONS,
    indexes: [],
    models: authorityModelsOf,
    ...(onFatal ? { onFatal } : {}),
  });
  return { ...es, pipeline: createPipeline(es.writer) };
}
