/**
 * Applying a batch message of the stream to a JetStream log's local copy: its records checked to
 * continue the copy's hash chain, staged with the replica's writes, a cut dropping the copy's prefix.
 */
import { FatalStorageError, type LogHead } from './event-log.js';
import type { Replica } from './jetstream-log.js';
import type { StagedBatch } from './lmdb-log.js';
import { decodeRecord, hashBytes } from './record.js';
import type { LogRecord } from '../kernel/record.js';
import { cutOfBatch } from './jetstream-cut.js';
import { toNew, unpackBatch } from './jetstream-batch.js';
import { wake, type JetStreamState } from './jetstream-state.js';

/** Stages a batch that the stream holds at `streamSeq` into the local copy, checking its chain. */
export function applyMessage(s: JetStreamState, streamSeq: number, data: Uint8Array, replica?: Replica): StagedBatch {
  if (streamSeq !== s.position.streamSeq + 1)
    throw new FatalStorageError(`the stream skipped from ${s.position.streamSeq} to ${streamSeq}`);
  const { records, seq, hash } = continuation(streamSeq, data, s.inner.head());
  const inTxn = replica?.apply(records);
  // A cut (retention) read from the stream: the local copy drops the prefix as the leader's did.
  const cut = cutOfBatch(records);
  const cutting = cut && replica?.cut ? replica.cut(records, cut) : undefined;
  const carriedWrites = cut ? s.cutWrites?.(records) : undefined;
  const localCut =
    cut && cut.firstSeq > s.inner.first()
      ? { firstSeq: cut.firstSeq, prevHash: cut.prevHash, treeRoot: cut.treeRoot }
      : undefined;
  const next = { streamSeq, seq };
  const staged = s.inner.stage(
    records.map(toNew),
    (recs) => {
      s.positions.putSync('position', next);
      inTxn?.(recs);
      carriedWrites?.();
      cutting?.inTransaction(recs);
    },
    localCut,
  );
  if (s.inner.head().hash !== hash)
    throw new FatalStorageError(`stream message ${streamSeq} re-encodes to other bytes`);
  s.position = next;
  s.pendingHead = s.inner.head();
  s.expectedLast = streamSeq;
  wake(s);
  const settled = staged.durable.then(() => replica?.settle(staged.records));
  return {
    records: staged.records,
    kept: staged.kept,
    durable: cutting ? settled.then(() => cutting.refold()) : settled,
  };
}

/**
 * The records of the stream message at `streamSeq` that come after the local copy's `head`, and the
 * head they lead to; throws when they do not continue its chain.
 */
function continuation(
  streamSeq: number,
  data: Uint8Array,
  head: LogHead,
): { readonly records: LogRecord[]; readonly seq: number; readonly hash: string } {
  let encoded = unpackBatch(data);
  let records = encoded.map((b) => decodeRecord(b));
  let { seq, hash } = head;
  // A copy started from a cut holds the first message after it only from the cut on: the record
  // before the cut must be the one whose hash the cut recorded.
  const skip = records.findIndex((r) => r.seq > seq);
  if (skip > 0) {
    if (records[skip - 1]!.seq !== seq || hashBytes(encoded[skip - 1]!) !== hash)
      throw new FatalStorageError(`stream message ${streamSeq} does not continue the local log at ${seq}`);
    encoded = encoded.slice(skip);
    records = records.slice(skip);
  }
  for (let i = 0; i < records.length; i++) {
    if (records[i]!.seq !== seq + 1 || records[i]!.prev !== hash)
      throw new FatalStorageError(`stream message ${streamSeq} does not continue the local log at ${seq}`);
    seq++;
    hash = hashBytes(encoded[i]!);
  }
  return { records, seq, hash };
}
