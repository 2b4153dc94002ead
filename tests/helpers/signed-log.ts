import { join } from 'node:path';
import { embeddedHeadSigner } from '../../src/log/head-signer.js';
import { openLmdbLog, SIGNED_HEAD, type LmdbEventLog } from '../../src/log/lmdb-log.js';
import { openLmdbStore, type LmdbStore } from '../../src/log/lmdb-store.js';
import { leafHash } from '../../src/log/merkle.js';
import { openInstanceSigner } from '../../src/cli/instance/head-signing.js';
import type { Config } from '../../src/services/config-schema.js';
import type { NoteSigner } from '../../src/log/signed-note.js';

/** The signing key the log tests sign heads with. */
export const TEST_LOG_KEY: NoteSigner = { name: 'vigil.log/test', seed: new Uint8Array(32).fill(7) };

/** The store's log with an embedded head signer (its state in the store folder's `signer/`), as `vigil serve` opens it. */
export function signedLog(store: LmdbStore, key: NoteSigner = TEST_LOG_KEY): LmdbEventLog {
  return openLmdbLog(store, undefined, { signer: embeddedHeadSigner(key, join(store.path, 'signer')) });
}

/**
 * Signs the head of records planted in a stopped instance's store below the log's API, as the Vigil
 * that wrote them would have (a test standing in for a log written by an older version or another
 * tool, whose records are genuine): the store's signer extends its last signed head over them.
 */
export async function attestPlantedTail(config: Config): Promise<void> {
  const store = openLmdbStore(config.storage.path);
  const log = openLmdbLog(store, undefined, { signer: await openInstanceSigner(config) });
  try {
    await log.signing;
    const head = log.head().seq;
    const leaves = [...log.readRaw(log.attested() + 1)].map((r) => leafHash(r.bytes));
    const note = await log.signer!.sign(leaves, head, log.tree.root(head));
    await store.root.transaction(() => store.db<string, string>('log-meta').putSync(SIGNED_HEAD, note));
  } finally {
    await log.close();
    await store.close();
  }
}
