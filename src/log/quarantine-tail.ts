/**
 * `vigil log quarantine-tail`: records past the store's last signed head were not written by a
 * signing Vigil (docs/log.md, "Signed heads"). They are written out to a file (each with its stored
 * bytes, as `vigil log export --raw` writes them) and removed from the store with the head and the
 * Merkle tree put back at the signed head, in one transaction; the caller then records the move in
 * the log (`LogTailQuarantined`), signed like any other commit.
 */
import { createHash } from 'node:crypto';
import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Database } from 'lmdb';
import type { LogCut, LogHead } from './event-log.js';
import { exportLine } from './export-line.js';
import { storedAttestation } from './lmdb-log.js';
import { ownerOnlyFolder, type LmdbStore } from './lmdb-store.js';
import { decodeRecord, hashBytes } from './record.js';
import { GENESIS_HASH } from '../kernel/record.js';
import { syncDir } from '../kernel/secret-files.js';

/** What was set aside: the records' range, the file and its SHA-256. */
export interface QuarantinedTail {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly file: string;
  readonly digest: string;
}

/** One line of the quarantine file: the export line when the bytes decode, else the seq and the bytes alone. */
function lineOf(seq: number, bytes: Uint8Array): string {
  try {
    return exportLine(decodeRecord(bytes), bytes);
  } catch {
    return `${JSON.stringify({ seq, undecodable: true, raw: Buffer.from(bytes).toString('base64') })}\n`;
  }
}

/**
 * Moves the records past the store's attestation (its signed head, or its latest checkpoint) into a
 * file in `outDir` (0700; the file 0600, fsynced before anything is removed) and takes them out of
 * the store. Undefined when every record is attested. Run on a store no process has open.
 */
export async function quarantineTail(
  store: LmdbStore,
  outDir: string,
  now: Date,
): Promise<QuarantinedTail | undefined> {
  const records: Database<Uint8Array, number> = store.db('log', { encoding: 'binary', keyEncoding: 'uint32' });
  const meta = store.db<unknown, string>('log-meta');
  const nodes = store.db('merkle', { encoding: 'binary' }) as unknown as Database<Uint8Array, [number, number]>;
  const treeMeta: Database<number, string> = store.db('merkle-meta');
  const attested = storedAttestation(store).size;
  let last = attested;
  for (const key of records.getKeys({ reverse: true, limit: 1 })) last = Math.max(last, key);
  const recorded = (meta.get('head') as LogHead | undefined)?.seq ?? 0;
  last = Math.max(last, recorded);
  if (last <= attested) return undefined;
  const cut = meta.get('cut') as LogCut | undefined;
  if (cut && attested < cut.firstSeq - 1)
    throw new Error(`the signed head (${attested} records) is before the retention cut at ${cut.firstSeq}`);

  ownerOnlyFolder(outDir);
  const file = join(outDir, `tail-${attested + 1}-${last}-${now.toISOString().replace(/[:.]/g, '')}.jsonl`);
  const digest = createHash('sha256');
  const fd = openSync(file, 'wx', 0o600);
  try {
    for (const { key, value } of records.getRange({ start: attested + 1 })) {
      const line = lineOf(key, value);
      digest.update(line);
      writeSync(fd, line);
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDir(outDir);

  const previous = attested === 0 ? undefined : records.get(attested);
  const head: LogHead =
    attested === 0
      ? { seq: 0, hash: GENESIS_HASH }
      : { seq: attested, hash: previous ? hashBytes(previous) : (cut?.prevHash ?? GENESIS_HASH) };
  await store.root.transaction(() => {
    for (const key of [...records.getKeys({ start: attested + 1 })]) records.removeSync(key);
    meta.putSync('head', head);
    // Tree nodes of complete subtrees past the head go; those the signed head covers stay.
    for (const key of [...nodes.getKeys({})]) {
      const [level, index] = key;
      if ((index + 1) * 2 ** level > attested) nodes.removeSync(key);
    }
    treeMeta.putSync('size', attested);
  });
  await store.root.flushed;
  return { fromSeq: attested + 1, toSeq: last, file, digest: digest.digest('hex') };
}
