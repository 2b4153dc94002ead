/**
 * Retention on the JetStream log (docs/scale-out.md, "Retention on a cluster"): finding a cut in a
 * batch, the stream message that holds a record, and starting an empty store from the last cut.
 */
import type { Database } from 'lmdb';
import type { StoredMsg } from '@nats-io/jetstream';
import type { LogCut, LogHead } from './event-log.js';
import type { JetStreamConnection } from './jetstream-connect.js';
import { unpackBatch } from './jetstream-batch.js';
import type { LmdbStore } from './lmdb-store.js';
import { frontierOfText, seedMerkleTree } from './merkle-tree.js';
import { frontierRoot } from './merkle.js';
import { decodeRecord } from './record.js';
import { type LogRecord } from '../kernel/record.js';

/** The cut a batch makes: its `LogSegmentsExpired` record, as the log's cut. */
export function cutOfBatch(
  records: readonly LogRecord[],
): (LogCut & { readonly treeFrontier?: readonly string[] }) | undefined {
  const r = records.find((x) => x.type === 'LogSegmentsExpired');
  if (!r) return undefined;
  const d = r.data as { firstSeq: number; prevHash: string; treeRoot: string; treeFrontier?: string[] };
  return {
    firstSeq: d.firstSeq,
    prevHash: d.prevHash,
    treeRoot: d.treeRoot,
    atSeq: records.at(-1)!.seq,
    ...(d.treeFrontier ? { treeFrontier: d.treeFrontier } : {}),
  };
}

/** The records a batch message holds (header `Vigil-Seq: first-last`, or its records when the header is missing). */
function rangeOf(m: StoredMsg): [number, number] {
  const h = /^(\d+)-(\d+)$/.exec(m.header?.get('Vigil-Seq') ?? '');
  if (h) return [Number(h[1]), Number(h[2])];
  const encoded = unpackBatch(m.data);
  return [decodeRecord(encoded[0]!).seq, decodeRecord(encoded.at(-1)!).seq];
}

/** The stream sequence of the message holding record `seq`, searched in [lo, hi] (log seqs grow with stream seqs). */
export async function messageHolding(conn: JetStreamConnection, seq: number, lo: number, hi: number): Promise<number> {
  while (lo <= hi) {
    const mid = Math.floor((lo + hi) / 2);
    const m = await conn.jsm.streams.getMessage(conn.stream, { seq: mid });
    if (!m) throw new Error(`stream message ${mid} of ${conn.stream} is missing`);
    const [a, b] = rangeOf(m);
    if (seq < a) hi = mid - 1;
    else if (seq > b) lo = mid + 1;
    else return mid;
  }
  throw new Error(`no message of the stream ${conn.stream} holds record ${seq}`);
}

/**
 * Starts an empty store behind a purged stream prefix from the stream's last cut (found by the cuts
 * subject): the head and cut at the cut's chain hash, the Merkle tree from the frontier it recorded,
 * and the position just before the message that holds its first record. The records that follow
 * are checked against that hash as they are copied.
 */
export async function startFromCut(store: LmdbStore, conn: JetStreamConnection, firstStreamSeq: number): Promise<void> {
  const last = await conn.jsm.streams.getMessage(conn.stream, { last_by_subj: conn.cutSubject });
  const records = last ? unpackBatch(last.data).map((b) => decodeRecord(b)) : [];
  const cut = cutOfBatch(records);
  if (!last || !cut)
    throw new Error(
      `refusing to start: the stream ${conn.stream} starts at message ${firstStreamSeq} and records no cut (on ` +
        `${conn.cutSubject}): it was purged by hand; this store cannot copy it`,
    );
  if (!cut.treeFrontier)
    throw new Error(
      `refusing to start: the last cut of ${conn.stream} does not record its Merkle frontier: this store cannot ` +
        `start from it`,
    );
  const size = cut.firstSeq - 1;
  const frontier = frontierOfText(size, cut.treeFrontier);
  if (size % 256 !== 0 || Buffer.from(frontierRoot(frontier)).toString('base64') !== cut.treeRoot)
    throw new Error(
      `refusing to start: the last cut of ${conn.stream} records a Merkle frontier that does not have its root`,
    );
  const streamSeq = await messageHolding(conn, cut.firstSeq, firstStreamSeq, last.seq).catch((err: Error) => {
    throw new Error(
      `refusing to start: the stream ${conn.stream} does not hold record ${cut.firstSeq}, the first after its last ` +
        `cut (${err.message}): it was purged past the cut by hand; this store cannot copy it`,
    );
  });
  seedMerkleTree(store, frontier);
  const meta: Database<LogHead | LogCut, string> = store.db('log-meta');
  const positions: Database<{ streamSeq: number; seq: number }, string> = store.db('jetstream');
  const { treeFrontier: _, ...logCut } = cut;
  await store.root.transaction(() => {
    meta.putSync('head', { seq: size, hash: cut.prevHash });
    meta.putSync('cut', logCut);
    positions.putSync('position', { streamSeq: streamSeq - 1, seq: size });
  });
  await store.root.flushed;
}
