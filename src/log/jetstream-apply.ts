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
import { parseCheckpoint } from './checkpoint.js';
import { leafHash } from './merkle.js';
import { openNote } from './signed-note.js';

/**
 * Stages a batch that the stream holds at `streamSeq` into the local copy, checking its chain and,
 * with a signer, the head the leader signed for it (`head`: the message's Vigil-Head header), before
 * anything folds it.
 */
export function applyMessage(
  s: JetStreamState,
  streamSeq: number,
  data: Uint8Array,
  replica?: Replica,
  head?: string,
): StagedBatch {
  if (streamSeq !== s.position.streamSeq + 1)
    throw new FatalStorageError(`the stream skipped from ${s.position.streamSeq} to ${streamSeq}`);
  const { records, encoded, seq, hash } = continuation(streamSeq, data, s.inner.head());
  const note = s.heads ? checkedHead(s, streamSeq, encoded, seq, head) : undefined;
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
    note,
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
): { readonly records: LogRecord[]; readonly encoded: Uint8Array[]; readonly seq: number; readonly hash: string } {
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
  return { records, encoded, seq, hash };
}

/**
 * The note of the head a batch message carries, once it is signed by the cluster's log key (the
 * node's own signer's, or one the signer trusts) over the tree this copy has with the batch's records
 * after it; throws (fatally: nothing of the batch is folded) otherwise.
 */
function checkedHead(
  s: JetStreamState,
  streamSeq: number,
  encoded: readonly Uint8Array[],
  seq: number,
  header: string | undefined,
): string {
  const refuse = (why: string) =>
    new FatalStorageError(`stream message ${streamSeq} is refused: ${why} (docs/scale-out.md, "Signed heads")`);
  if (header === undefined)
    throw refuse('it carries no signed head (a leader without a signer, or not a Vigil node, wrote it)');
  const note = Buffer.from(header, 'base64').toString('utf8');
  const opened = openNote(note, s.heads!.verifier);
  if (!opened.ok) throw refuse(`its head is not signed by this cluster's log key: ${opened.error}`);
  const cp = parseCheckpoint(opened.text);
  if (!cp.ok || cp.checkpoint.size !== seq) throw refuse(`its signed head is not of record ${seq}`);
  const root = s.inner.tree.rootAfter(encoded.map(leafHash));
  if (!Buffer.from(root).equals(Buffer.from(cp.checkpoint.root)))
    throw refuse(`its signed head is not the tree of the local copy with its records`);
  return note;
}
