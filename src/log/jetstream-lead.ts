/**
 * A JetStream log's leader: taking the lead and stepping down, publishing batches to the stream
 * before they are staged into the local copy, and purging the stream's prefix behind a cut.
 */
import type { PubAck } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { FatalStorageError, NotLeaderError, type LogCut, type LogHead } from './event-log.js';
import type { JetStreamConnection } from './jetstream-connect.js';
import type { InTransaction, StagedBatch } from './lmdb-log.js';
import { linkBatch } from './chain.js';
import { appendLeaf, frontierRoot, leafHash } from './merkle.js';
import type { NewRecord } from '../kernel/record.js';
import { messageHolding } from './jetstream-cut.js';
import { HEAD_HEADER, packBatch, republish } from './jetstream-batch.js';
import { catchUp, follow, inTurn } from './jetstream-follow.js';
import type { JetStreamState } from './jetstream-state.js';

/**
 * Stages a leader's batch: links it on the pending head and publishes it at once; the local copy
 * stages it once the stream has it at the expected sequence.
 */
export function stageAsLeader(
  s: JetStreamState,
  batch: readonly NewRecord[],
  inTransaction?: InTransaction,
  cut?: LogCut,
): StagedBatch {
  if (s.failed) throw s.failed;
  if (!s.leads || !s.holds()) throw new NotLeaderError('this node does not lead: the write goes to the leader');
  const { records, bytes: encoded, head: linked } = linkBatch(batch, s.pendingHead);
  if (records.length === 0) return { records, kept: records, durable: s.staging.then(() => undefined) };
  s.pendingHead = linked;
  const { seq, hash } = linked;
  const expect = s.expectedLast++;
  // The batch's head, signed before the stream has it: every node checks it before folding the batch.
  const signed = signHead(s, encoded, seq);
  let publish: (() => Promise<PubAck>) | undefined;
  const deadline = performance.now() + s.retryWindowMs;
  // Sent once signed, so batches pipeline; a failed first attempt is retried once the batch before it settled.
  const ack = signed.then((note) => {
    publish = publisher(s.conn, encoded, records[0]!.seq, linked, expect, cut !== undefined, note);
    return publish();
  });
  ack.catch(() => undefined);
  const staged = s.staging.then(async () => {
    const note = await signed;
    const a = await ack.catch((err: unknown) => (publish ? republish(publish, err, deadline) : Promise.reject(err)));
    if (a.seq !== expect + 1)
      throw new FatalStorageError(
        `the stream stored batch ${records[0]!.seq}-${seq} at ${a.seq}, expected ${expect + 1}`,
      );
    const next = { streamSeq: a.seq, seq };
    const local = s.inner.stage(
      batch,
      (recs) => {
        s.positions.putSync('position', next);
        inTransaction?.(recs);
      },
      cut,
      note,
    );
    if (s.inner.head().hash !== hash)
      throw new FatalStorageError(`the local copy chained batch ${records[0]!.seq}-${seq} differently`);
    s.position = next;
    return local;
  });
  s.staging = staged;
  // Once the cut is in the stream and the local copy, the stream's prefix is purged; a failed
  // purge is done again by the next expiry run or the next leader (purgeBelowCut).
  const durable = staged
    .then((local) => local.durable)
    .catch(s.fail)
    .then(() => (cut ? purgeBelowCut(s).catch(() => undefined) : undefined));
  s.pending = durable;
  // The batch itself is held until the stream has it (the local copy is staged from it then).
  return { records, kept: records, durable };
}

/**
 * The signed head of a leader's batch `encoded` ending at record `seq`: its leaves hashed onto the tree
 * of the batches before it, signed by the node's signer in order. Undefined without a signer.
 */
function signHead(s: JetStreamState, encoded: readonly Uint8Array[], seq: number): Promise<string | undefined> {
  if (!s.heads || !s.pendingTree) return Promise.resolve(undefined);
  const leaves = encoded.map(leafHash);
  for (const leaf of leaves) appendLeaf(s.pendingTree, leaf);
  const root = frontierRoot(s.pendingTree);
  const heads = s.heads;
  const next = s.signing.then(() => heads.sign(leaves, seq, root));
  s.signing = next.catch(() => undefined);
  return next;
}

/**
 * The publish of the batch message holding records `first` to `head` (retried as it is), expecting
 * the stream's last sequence at `expect`, with the batch's signed head.
 */
function publisher(
  conn: JetStreamConnection,
  encoded: readonly Uint8Array[],
  first: number,
  head: LogHead,
  expect: number,
  cut: boolean,
  note: string | undefined,
): () => Promise<PubAck> {
  const h = headers();
  h.set('Vigil-Seq', `${first}-${head.seq}`);
  if (note !== undefined) h.set(HEAD_HEADER, Buffer.from(note).toString('base64'));
  // The message id is the new head's hash: a retried publish is recognised as the same batch, and
  // a different batch (another writer's) never passes as a duplicate of this one.
  const payload = packBatch(encoded);
  // A cut goes on the cuts subject: a node that starts behind the purged prefix finds the last one by it.
  return () =>
    conn.js.publish(cut ? conn.cutSubject : conn.subject, payload, {
      msgID: head.hash,
      headers: h,
      expect: { lastSequence: expect, streamName: conn.stream },
    });
}

/** Purges the stream's messages wholly before the local copy's last cut, when the stream still holds them. */
export async function purgeBelowCut(s: JetStreamState): Promise<void> {
  const { conn } = s;
  const c = s.inner.cut();
  if (!c) return;
  const { first_seq: first } = (await conn.jsm.streams.info(conn.stream)).state;
  if (s.purged?.firstSeq === c.firstSeq && first >= s.purged.keep) return;
  const keep = await messageHolding(conn, c.firstSeq, first, s.position.streamSeq);
  if (first < keep) await conn.jsm.streams.purge(conn.stream, { seq: keep });
  s.purged = { firstSeq: c.firstSeq, keep };
}

/** Stops following, catches the local copy up with the stream, then appends while `holdsLease` says it may. */
export async function lead(s: JetStreamState, holdsLease?: () => boolean): Promise<void> {
  s.following = false;
  await inTurn(s, async () => {
    await s.stopReplica?.();
    await catchUp(s, s.replica);
    if (s.heads) {
      // The heads of the copy were signed by whichever node led: this node's signer takes them up first.
      await s.inner.resume();
      const head = s.inner.head().seq;
      s.pendingTree = head === 0 ? { size: 0, roots: [] } : s.inner.tree.frontierAt(head);
    }
    s.holds = holdsLease ?? (() => true);
    s.leads = true;
  });
  // The previous leader may have died between a cut and its purge: the purge is completed now.
  await purgeBelowCut(s).catch(() => undefined);
}

/** Stops appending once the appends in flight are settled, then follows the stream again. */
export async function stepDown(s: JetStreamState): Promise<void> {
  s.leads = false;
  await s.staging.catch(() => undefined);
  await s.pending.catch(() => undefined);
  if (s.replica && !s.failed) await inTurn(s, () => follow(s, s.replica!));
}
