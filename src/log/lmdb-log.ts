import type { Database } from 'lmdb';
import { FatalStorageError, type EventLog, type LogCut, type LogHead } from './event-log.js';
import type { LmdbStore } from './lmdb-store.js';
import { lentReader, type LentDecode, type LentReader } from './lent-range.js';
import { leafHash } from './merkle.js';
import { openMerkleTree, type MerkleTree } from './merkle-tree.js';
import { decodeRecord, hashBytes, keptRecord } from './record.js';
import { linkBatch } from './chain.js';
import { GENESIS_HASH, type LogRecord, type NewRecord } from '../kernel/record.js';

/** Work to run inside the same LMDB write transaction as a batch (read-model updates, checkpoints). */
export type InTransaction = (records: readonly LogRecord[]) => void;

/** A batch whose seq and chain links are assigned, on its way to disk. */
export interface StagedBatch {
  /** The records as staged, for the caller's synchronous use. */
  readonly records: readonly LogRecord[];
  /** The same records as anything that holds them until `durable` keeps them (`keptRecord`). */
  readonly kept: readonly LogRecord[];
  /** Resolves once the batch is committed and flushed; rejects (fatally) when the outcome is unknown. */
  readonly durable: Promise<void>;
}

/** The LMDB log, with a hook that lets read models commit in the same transaction as the records. */
export interface LmdbEventLog extends EventLog {
  append(batch: readonly NewRecord[], inTransaction?: InTransaction): Promise<LogRecord[]>;
  /**
   * Assigns seq and links synchronously and queues the batch; batches staged in the same event
   * turn share one LMDB transaction and one flush (group commit).
   */
  stage(batch: readonly NewRecord[], inTransaction?: InTransaction, cut?: LogCut): StagedBatch;
  /** The first stored seq: 1, or the first record after the last cut. */
  first(): number;
  /**
   * The records the recorded head says the log holds but its store does not (its tail was cut or
   * lost), or undefined: such a store is verified (`vigil log verify` names the first), not served.
   */
  missingTail(): { readonly from: number; readonly to: number } | undefined;
  /** The last cut, when retention removed a prefix. */
  cut(): LogCut | undefined;
  /** Runs writes in a durable transaction of their own (checkpoints, rebuilt read models). */
  commit(work: () => void): Promise<void>;
  /** The RFC 9162 Merkle tree over the records, maintained in their transactions (docs/log.md). */
  readonly tree: MerkleTree;
  /**
   * A reader of committed records as `decode` reads them from their bytes, lent for the call
   * without a copy of each (src/log/lent-range.ts): for folds over the whole log. Each is a database
   * handle of its own: open one a decoder and keep it.
   */
  openLentReader<T>(decode: LentDecode<T>): LentReader<T>;
}

/** Opens the log kept in `store` (databases `log` and `log-meta`). */
export function openLmdbLog(store: LmdbStore, onFatal: (err: Error) => void = () => {}): LmdbEventLog {
  const records: Database<Uint8Array, number> = store.db('log', { encoding: 'binary', keyEncoding: 'uint32' });
  const meta: Database<LogHead, string> = store.db('log-meta');
  const cutMeta = meta as unknown as Database<LogCut, string>;
  let cut: LogCut | undefined = cutMeta.get('cut');
  const followers = new Set<(r: LogRecord) => void>();
  let head: LogHead = loadHead(records, meta);
  const openLentReader = <T>(decode: LentDecode<T>): LentReader<T> => lentReader(store.root, 'log', decode);
  // The tree hashes each leaf where lmdb-js reads its record, without a copy of it.
  const tree = openMerkleTree(store, openLentReader(leafHash), head.seq);
  let failed: Error | undefined;
  let pending: Promise<unknown> = Promise.resolve();

  function fail(err: unknown): never {
    failed ??= new FatalStorageError(`log write failed, outcome unknown: ${(err as Error)?.message ?? String(err)}`);
    onFatal(failed);
    throw failed;
  }

  function stage(batch: readonly NewRecord[], inTransaction?: InTransaction, newCut?: LogCut): StagedBatch {
    if (failed) throw failed;
    if (newCut && !(newCut.firstSeq > (cut?.firstSeq ?? 1) && newCut.firstSeq <= head.seq + 1))
      throw new RangeError(`cannot cut the log at ${newCut.firstSeq}`);
    const removeFrom = cut?.firstSeq ?? 1;
    let storedCut: LogCut | undefined;
    // Seq and chain links are assigned now, synchronously, so concurrent appends chain in call order.
    const { records: stored, bytes, head: newHead } = linkBatch(batch, head);
    // What the transaction and the followers hold until the batch is durable: not its events.
    const kept = stored.map((r, i) => keptRecord(r, bytes[i]!));
    if (newCut) storedCut = { ...newCut, atSeq: newHead.seq };
    head = newHead;
    const treeWrites = tree.stage(bytes);
    // A nested transactionSync is a child transaction: if anything in it throws, none of the
    // batch's writes survive, even though other work shares the outer batched transaction.
    const first = kept[0]?.seq;
    const done = store.root.transaction(() =>
      store.root.transactionSync(() => {
        // A batch chains behind the one staged before it: if that one did not commit (its child
        // transaction threw, or its commit failed), this one must not either, or the log has a hole.
        // (The first record after a cut has no record before it: a JetStream copy can start there.)
        if (
          first !== undefined &&
          (records.doesExist(first) || (first > (cut?.firstSeq ?? 1) && !records.doesExist(first - 1)))
        ) {
          throw new FatalStorageError(
            `record ${first - 1} was not committed: refusing to write record ${first} after it`,
          );
        }
        for (let i = 0; i < kept.length; i++) records.putSync(kept[i]!.seq, bytes[i]!);
        if (kept.length > 0) meta.putSync('head', newHead);
        if (newCut) {
          // The records go, the tree's nodes stay: proofs and checkpoints of the whole log still hold.
          for (let s = removeFrom; s < newCut.firstSeq; s++) records.removeSync(s);
          cutMeta.putSync('cut', storedCut!);
        }
        treeWrites();
        inTransaction?.(kept);
      }),
    );
    const durable = (async () => {
      try {
        await done;
        await store.root.flushed;
      } catch (err) {
        fail(err);
      }
      tree.settle(newHead.seq);
      if (storedCut) cut = storedCut;
      for (const r of kept) for (const f of followers) f(r);
    })();
    pending = durable;
    return { records: stored, kept, durable };
  }

  async function append(batch: readonly NewRecord[], inTransaction?: InTransaction): Promise<LogRecord[]> {
    const staged = stage(batch, inTransaction);
    await staged.durable;
    return [...staged.records];
  }

  function* read(from: number, to = head.seq): Iterable<LogRecord> {
    for (const { value } of records.getRange({ start: Math.max(1, from), end: to + 1 })) yield decodeRecord(value);
  }

  function* readRaw(from: number, to = head.seq): Iterable<{ seq: number; bytes: Uint8Array }> {
    for (const { key, value } of records.getRange({ start: Math.max(1, from), end: to + 1 }))
      yield { seq: key, bytes: value };
  }

  return {
    append,
    stage,
    read,
    readRaw,
    openLentReader,
    head: () => head,
    first: () => cut?.firstSeq ?? 1,
    cut: () => cut,
    missingTail() {
      let last = cut ? cut.firstSeq - 1 : 0;
      for (const key of records.getKeys({ reverse: true, limit: 1 })) last = key;
      return last < head.seq ? { from: last + 1, to: head.seq } : undefined;
    },
    async removePrefix(c, batch) {
      const staged = stage(batch, undefined, c);
      await staged.durable;
      return [...staged.records];
    },
    tree,
    async commit(work) {
      if (failed) throw failed;
      try {
        await store.root.transaction(work);
        await store.root.flushed;
      } catch (err) {
        fail(err);
      }
    },
    follow(from, onRecord) {
      for (const r of read(from + 1)) onRecord(r);
      followers.add(onRecord);
      return () => followers.delete(onRecord);
    },
    async close() {
      await pending.catch(() => undefined);
      followers.clear();
    },
  };
}

function loadHead(records: Database<Uint8Array, number>, meta: Database<LogHead, string>): LogHead {
  // The head is written in the same transaction as the records; `vigil log verify` checks that it
  // matches the last record, so a tampered tail is reported rather than silently adopted.
  const stored = meta.get('head');
  if (stored) return stored;
  let last: { key: number; value: Uint8Array } | undefined;
  for (const entry of records.getRange({ reverse: true, limit: 1 })) last = entry;
  return last ? { seq: last.key, hash: hashBytes(last.value) } : { seq: 0, hash: GENESIS_HASH };
}
