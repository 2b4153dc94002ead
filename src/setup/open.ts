import { createWriter, type Writer } from '../commands/writer.js';
import { openLmdbLog, type LmdbEventLog } from '../log/lmdb-log.js';
import { openLmdbStore, type LmdbStore } from '../log/lmdb-store.js';
import { createProjectionRuntime, type ProjectionRuntime } from '../projections/runtime.js';
import { AUTHORITY_PROJECTIONS } from './models.js';

/** The authority's store: its own log, read models and single writer (never the instance's). */
export interface AuthorityStore {
  readonly store: LmdbStore;
  readonly log: LmdbEventLog;
  readonly runtime: ProjectionRuntime;
  readonly writer: Writer;
  close(): Promise<void>;
}

/** Opens the authority store at `path` and folds its log into the authority's read models. */
export async function openAuthorityStore(path: string, onFatal?: (err: Error) => void): Promise<AuthorityStore> {
  const store = openLmdbStore(path);
  try {
    const log = openLmdbLog(store, onFatal);
    const runtime = createProjectionRuntime({ store, log, projections: AUTHORITY_PROJECTIONS, indexes: [] });
    await runtime.start();
    const writer = createWriter(log, runtime);
    let closed = false;
    return {
      store, log, runtime, writer,
      async close() {
        if (closed) return;
        closed = true;
        await log.close();
        await runtime.checkpoint().catch(() => undefined);
        await store.close();
      },
    };
  } catch (err) {
    await store.close().catch(() => undefined);
    throw err;
  }
}
