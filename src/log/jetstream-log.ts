import type { Database } from 'lmdb';
import { DeliverPolicy } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { FatalStorageError, NotLeaderError, type LogCut, type LogHead } from './event-log.js';
import type { JetStreamConnection } from './jetstream-connect.js';
import { openLmdbLog, type InTransaction, type LmdbEventLog, type StagedBatch } from './lmdb-log.js';
import type { LmdbStore } from './lmdb-store.js';
import { decodeRecord, hashBytes } from './record.js';
import { linkBatch } from './chain.js';
import { type LogRecord, type NewRecord } from '../kernel/record.js';
import { cutOfBatch, messageHolding, startFromCut } from './jetstream-cut.js';
import {
  DEFAULT_RETRY_WINDOW_MS,
  FOLLOW_EXPIRES_MS,
  packBatch,
  republish,
  toNew,
  unpackBatch,
} from './jetstream-batch.js';

/** Where the local copy stands in the stream: the last batch message it holds and the last record's seq. */
interface Position {
  readonly streamSeq: number;
  readonly seq: number;
}

/** What a follower does with batches that arrive from the stream: the read models' writes, and their settling. */
export interface Replica {
  /** Applies the records to in-memory models; returns the writes to run in their transaction. */
  apply(records: readonly LogRecord[]): InTransaction;
  /** Called once the records are in the local copy. */
  settle(records: readonly LogRecord[]): void;
  /**
   * A batch that cuts the log (retention), called before it is staged, while the records it removes
   * are still readable: the read models' writes that forget them (run in the batch's transaction),
   * and the refold from the cut, run once the batch is in the local copy.
   */
  cut?(records: readonly LogRecord[], cut: LogCut): { readonly inTransaction: InTransaction; refold(): Promise<void> };
}

/**
 * Writes beyond the log that a cut batch read from the stream needs in its transaction (the carried records' places);
 * undefined for other batches.
 */
export type CutWrites = (records: readonly LogRecord[]) => (() => void) | undefined;

/** Options of a JetStream log beyond its store and connection. */
export interface JetStreamLogOptions {
  /** How long a leader retries a publish whose outcome it does not know before the write fails. */
  readonly retryWindowMs?: number;
  readonly cutWrites?: CutWrites;
  /** Where the log says what it did by itself (a follower that stalled and follows again). */
  readonly notice?: (line: Record<string, unknown>) => void;
  /**
   * How long a follower's copy may stand still while the stream grows before its consumer is replaced (STALL_CHECK_MS).
   */
  readonly stallCheckMs?: number;
}

/**
 * How often a follower checks that its copy moves while the stream grows. A consumer can stall
 * without ending (its NATS server killed during a pull, JetStream answering "not enabled" while
 * its cluster recovers); one that made no progress for this long while the stream holds more is
 * replaced. Twice the pull expiry: a healthy consumer has renewed its pull by then.
 */
const STALL_CHECK_MS = 2 * FOLLOW_EXPIRES_MS;

/**
 * The log kept in a JetStream stream, one message per batch, with a local LMDB copy that every read
 * is served from. A batch is acknowledged once the stream has it (and then the local copy); only a
 * node that leads appends, each publish carrying the stream's expected last sequence.
 */
export interface JetStreamEventLog extends LmdbEventLog {
  /** The stream sequence of the last batch in the local copy. */
  position(): number;
  /**
   * Stops following, catches the local copy (and the replica's models) up with the stream, then
   * lets this node append while `holds()` (the lease) says it may.
   */
  lead(holds?: () => boolean): Promise<void>;
  /** Whether this node appends. */
  leading(): boolean;
  /** Stops appending once the appends in flight are settled, then follows the stream again. */
  stepDown(): Promise<void>;
  /** Applies the stream's new batches as they arrive, until the returned stop (or `lead`) is called. */
  replicate(replica: Replica): Promise<() => Promise<void>>;
  /**
   * Resolves once the local copy holds every batch the stream held when called (a follower's read
   * waits for it); false when that took longer than `timeoutMs`. A leader holds them already.
   */
  caughtUpWithStream(timeoutMs: number): Promise<boolean>;
  /**
   * Purges the stream's messages wholly before the local copy's last cut (retention), when the
   * stream still holds them: after each cut, and again when a node starts leading (its predecessor
   * may have died between the cut and the purge). Idempotent; only the leader calls it.
   */
  purgeBelowCut(): Promise<void>;
}

export { NotLeaderError };

/**
 * Opens the local copy kept in `store` and brings it up to the stream's last batch. A copy that is
 * not a prefix of the stream (another stream, a store that held an LMDB log) is refused.
 */
export async function openJetStreamLog(
  store: LmdbStore,
  conn: JetStreamConnection,
  onFatal: (err: Error) => void = () => {},
  opts: JetStreamLogOptions = {},
): Promise<JetStreamEventLog> {
  const { retryWindowMs = DEFAULT_RETRY_WINDOW_MS, cutWrites, notice = () => {}, stallCheckMs = STALL_CHECK_MS } = opts;
  const positions: Database<Position, string> = store.db('jetstream');
  const stateAtOpen = (await conn.jsm.streams.info(conn.stream)).state;
  // An empty store behind a purged prefix (retention) starts from the stream's last cut; so does
  // one that started from a cut and copied nothing yet, when the stream was purged again meanwhile.
  const at = positions.get('position');
  const meta = store.db('log-meta') as Database<LogHead | LogCut, string>;
  const startedCut = meta.get('cut') as LogCut | undefined;
  const startedOnly =
    at !== undefined &&
    startedCut !== undefined &&
    at.seq === startedCut.firstSeq - 1 &&
    at.seq === (meta.get('head') as LogHead | undefined)?.seq;
  const empty = at === undefined && meta.get('head') === undefined;
  if ((empty || startedOnly) && stateAtOpen.messages > 0 && stateAtOpen.first_seq > (at?.streamSeq ?? 0) + 1)
    await startFromCut(store, conn, stateAtOpen.first_seq);
  const inner = openLmdbLog(store, onFatal);
  let position: Position = positions.get('position') ?? { streamSeq: 0, seq: 0 };
  if (position.seq !== inner.head().seq) {
    throw new Error(
      `refusing to start: the store at ${store.path} holds ${inner.head().seq} records that did not come from a ` +
        `JetStream stream: a JetStream node needs its own store directory`,
    );
  }
  let failed: Error | undefined;
  let closing = false;
  /** The consumer of a catch-up under way (closed with the log). */
  let catching: { close(): Promise<void | Error> } | undefined;
  let leads = false;
  let holds: () => boolean = () => true;
  let replica: Replica | undefined;
  let pendingHead: LogHead = inner.head();
  let expectedLast = position.streamSeq;
  let staging: Promise<unknown> = Promise.resolve();
  let pending: Promise<unknown> = Promise.resolve();

  function fail(err: unknown): never {
    failed ??=
      err instanceof FatalStorageError
        ? err
        : new FatalStorageError(`log write failed, outcome unknown: ${(err as Error)?.message ?? String(err)}`);
    onFatal(failed);
    throw failed;
  }

  /** Stages a batch that the stream holds at `streamSeq` into the local copy, checking its chain. */
  function applyMessage(streamSeq: number, data: Uint8Array, replica?: Replica): StagedBatch {
    if (streamSeq !== position.streamSeq + 1)
      throw new FatalStorageError(`the stream skipped from ${position.streamSeq} to ${streamSeq}`);
    let encoded = unpackBatch(data);
    let records = encoded.map((b) => decodeRecord(b));
    let { seq, hash } = inner.head();
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
    const inTxn = replica?.apply(records);
    // A cut (retention) read from the stream: the local copy drops the prefix as the leader's did.
    const cut = cutOfBatch(records);
    const cutting = cut && replica?.cut ? replica.cut(records, cut) : undefined;
    const carriedWrites = cut ? cutWrites?.(records) : undefined;
    const localCut =
      cut && cut.firstSeq > inner.first()
        ? { firstSeq: cut.firstSeq, prevHash: cut.prevHash, treeRoot: cut.treeRoot }
        : undefined;
    const next = { streamSeq, seq };
    const staged = inner.stage(
      records.map(toNew),
      (recs) => {
        positions.putSync('position', next);
        inTxn?.(recs);
        carriedWrites?.();
        cutting?.inTransaction(recs);
      },
      localCut,
    );
    if (inner.head().hash !== hash)
      throw new FatalStorageError(`stream message ${streamSeq} re-encodes to other bytes`);
    position = next;
    pendingHead = inner.head();
    expectedLast = streamSeq;
    wake();
    const settled = staged.durable.then(() => replica?.settle(staged.records));
    return {
      records: staged.records,
      kept: staged.kept,
      durable: cutting ? settled.then(() => cutting.refold()) : settled,
    };
  }

  /** Applies every batch after the local position up to the stream's last message now. */
  async function catchUp(replica?: Replica): Promise<void> {
    const last = (await conn.jsm.streams.info(conn.stream)).state.last_seq;
    if (last < position.streamSeq)
      throw new Error(
        `the local copy holds stream message ${position.streamSeq} and the stream ${conn.stream} ends at ${last}: ` +
          `the stream is not the one this store copied`,
      );
    // A consumer that delivers nothing for a check period stalled (see STALL_CHECK_MS): another one
    // takes over from where the copy stands.
    for (let attempt = 1; position.streamSeq < last; attempt++) {
      if (failed) throw failed;
      if (closing) return;
      if (attempt > 1)
        notice({
          level: 'warn',
          msg: 'catching up with the stream stalled: going on with a new consumer',
          position: position.streamSeq,
          streamLast: last,
          attempt,
        });
      const consumer = await conn.js.consumers.get(conn.stream, {
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: position.streamSeq + 1,
      });
      const messages = await consumer.consume({ expires: FOLLOW_EXPIRES_MS });
      catching = messages;
      const idle = setTimeout(() => {
        void messages.close().catch(() => undefined);
      }, stallCheckMs);
      let staged: StagedBatch | undefined;
      try {
        for await (const m of messages) {
          idle.refresh();
          if (m.seq <= position.streamSeq) continue;
          staged = applyMessage(m.seq, m.data, replica);
          if (m.seq >= last) break;
        }
      } finally {
        clearTimeout(idle);
        catching = undefined;
        await messages.close().catch(() => undefined);
      }
      await staged?.durable;
    }
  }

  async function checkPosition(): Promise<void> {
    if (position.streamSeq === 0) return;
    // A copy started from a cut has no message at its position yet: the next one is checked against the cut's hash.
    const c = inner.cut();
    if (c && position.seq === c.firstSeq - 1) return;
    const stored = await conn.jsm.streams.getMessage(conn.stream, { seq: position.streamSeq });
    if (!stored && stateAtOpen.first_seq > position.streamSeq + 1) {
      throw new Error(
        `refusing to start: the stream ${conn.stream} no longer holds the messages after this store's position ` +
          `(${position.streamSeq}): retention purged them up to ${stateAtOpen.first_seq - 1} while this node was ` +
          `away; move ${store.path} aside and start the node with an empty storage.path: it starts from the last cut ` +
          `(docs/scale-out.md)`,
      );
    }
    if (!stored) return; // purged up to this very message: the next one is checked against the local head
    const encoded = unpackBatch(stored.data);
    if (encoded.length === 0 || hashBytes(encoded[encoded.length - 1]!) !== inner.head().hash) {
      throw new Error(
        `refusing to start: stream message ${position.streamSeq} of ${conn.stream} is not the batch this store ` +
          `holds: the stream is not the one this store copied`,
      );
    }
  }

  /** The last purge: the cut it was for and the first stream message it kept. */
  let purged: { readonly firstSeq: number; readonly keep: number } | undefined;
  async function purgeBelowCut(): Promise<void> {
    const c = inner.cut();
    if (!c) return;
    const { first_seq: first } = (await conn.jsm.streams.info(conn.stream)).state;
    if (purged?.firstSeq === c.firstSeq && first >= purged.keep) return;
    const keep = await messageHolding(conn, c.firstSeq, first, position.streamSeq);
    if (first < keep) await conn.jsm.streams.purge(conn.stream, { seq: keep });
    purged = { firstSeq: c.firstSeq, keep };
  }

  function stage(batch: readonly NewRecord[], inTransaction?: InTransaction, cut?: LogCut): StagedBatch {
    if (failed) throw failed;
    if (!leads || !holds()) throw new NotLeaderError('this node does not lead: the write goes to the leader');
    const { records, bytes: encoded, head: linked } = linkBatch(batch, pendingHead);
    if (records.length === 0) return { records, kept: records, durable: staging.then(() => undefined) };
    pendingHead = linked;
    const { seq, hash } = linked;
    const expect = expectedLast++;
    const h = headers();
    h.set('Vigil-Seq', `${records[0]!.seq}-${seq}`);
    // The message id is the new head's hash: a retried publish is recognised as the same batch, and
    // a different batch (another writer's) never passes as a duplicate of this one.
    const payload = packBatch(encoded);
    // A cut goes on the cuts subject: a node that starts behind the purged prefix finds the last one by it.
    const publish = () =>
      conn.js.publish(cut ? conn.cutSubject : conn.subject, payload, {
        msgID: hash,
        headers: h,
        expect: { lastSequence: expect, streamName: conn.stream },
      });
    const deadline = performance.now() + retryWindowMs;
    // Sent at once, so batches pipeline; a failed first attempt is retried once the batch before it settled.
    const ack = publish();
    ack.catch(() => undefined);
    const staged = staging.then(async () => {
      const a = await ack.catch((err: unknown) => republish(publish, err, deadline));
      if (a.seq !== expect + 1)
        throw new FatalStorageError(
          `the stream stored batch ${records[0]!.seq}-${seq} at ${a.seq}, expected ${expect + 1}`,
        );
      const next = { streamSeq: a.seq, seq };
      const local = inner.stage(
        batch,
        (recs) => {
          positions.putSync('position', next);
          inTransaction?.(recs);
        },
        cut,
      );
      if (inner.head().hash !== hash)
        throw new FatalStorageError(`the local copy chained batch ${records[0]!.seq}-${seq} differently`);
      position = next;
      return local;
    });
    staging = staged;
    // Once the cut is in the stream and the local copy, the stream's prefix is purged; a failed
    // purge is done again by the next expiry run or the next leader (purgeBelowCut).
    const durable = staged
      .then((local) => local.durable)
      .catch(fail)
      .then(() => (cut ? purgeBelowCut().catch(() => undefined) : undefined));
    pending = durable;
    // The batch itself is held until the stream has it (the local copy is staged from it then).
    return { records, kept: records, durable };
  }

  let stopReplica: (() => Promise<void>) | undefined;

  const waiters = new Set<{ readonly streamSeq: number; readonly resolve: () => void }>();
  function wake(): void {
    for (const w of waiters)
      if (position.streamSeq >= w.streamSeq) {
        waiters.delete(w);
        w.resolve();
      }
  }

  // Following, leading and replacing a stalled consumer run one at a time: two consumers applying
  // batches at once would each see the other's as a skipped message.
  let turn: Promise<unknown> = Promise.resolve();
  function inTurn<T>(step: () => Promise<T>): Promise<T> {
    const next = turn.then(step);
    turn = next.catch(() => undefined);
    return next;
  }

  /** Whether this node follows the stream (neither leading, about to lead, nor closed). */
  let following = false;
  let stallCheck: NodeJS.Timeout | undefined;
  let seenAt = -1;
  let refollowing = false;

  /**
   * Replaces the follower's consumer when the copy stayed at one position for a whole check
   * period while the stream holds more (see STALL_CHECK_MS); a copy that moved is left alone.
   */
  async function checkProgress(): Promise<void> {
    if (!following || leads || failed || refollowing) return;
    const at = position.streamSeq;
    if (at !== seenAt) {
      seenAt = at;
      return;
    }
    const last = (await conn.jsm.streams.info(conn.stream)).state.last_seq;
    if (position.streamSeq !== at || last <= at) return;
    refollowing = true;
    try {
      await inTurn(async () => {
        if (!following || leads || failed || !replica || position.streamSeq !== at) return;
        notice({
          level: 'warn',
          msg: 'the local copy stopped following the stream: following again with a new consumer',
          position: at,
          streamLast: last,
          stalledForMs: stallCheckMs,
        });
        await follow(replica);
      });
    } finally {
      refollowing = false;
    }
  }

  async function follow(r: Replica): Promise<() => Promise<void>> {
    replica = r;
    await stopReplica?.();
    if (closing) return async () => {};
    following = true;
    stallCheck ??= setInterval(() => {
      checkProgress().catch(() => undefined);
    }, stallCheckMs).unref();
    await catchUp(r);
    if (closing) return async () => {};
    const consumer = await conn.js.consumers.get(conn.stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: position.streamSeq + 1,
    });
    // Pulls that expire every 5 s (heartbeats every 2.5 s): a consumer lost with its server is
    // noticed and recreated in seconds, not after the default 30 s.
    const messages = await consumer.consume({ expires: FOLLOW_EXPIRES_MS });
    const running = (async () => {
      for await (const m of messages) {
        if (leads) break;
        if (m.seq <= position.streamSeq) continue;
        try {
          pending = applyMessage(m.seq, m.data, r).durable.catch(fail);
        } catch (err) {
          fail(err);
        }
      }
    })().catch((err: unknown) => {
      // The consumer gave up (it could not be recreated): the progress check replaces it.
      if (following && !failed)
        notice({ level: 'warn', msg: 'the stream consumer ended', error: (err as Error)?.message ?? String(err) });
    });
    const stop = async () => {
      await messages.close().catch(() => undefined);
      await running;
      await pending.catch(() => undefined);
      if (stopReplica === stop) stopReplica = undefined;
    };
    stopReplica = stop;
    return stop;
  }

  /** Stages a batch and resolves with its records once it is durable (in the stream and the local copy). */
  async function commit(
    batch: readonly NewRecord[],
    inTransaction?: InTransaction,
    cut?: LogCut,
  ): Promise<LogRecord[]> {
    const staged = stage(batch, inTransaction, cut);
    await staged.durable;
    return [...staged.records];
  }

  // Everything but appending is the local copy's.
  const log: JetStreamEventLog = {
    ...inner,
    stage,
    head: () => pendingHead,
    append: (batch, inTransaction) => commit(batch, inTransaction),
    removePrefix: (c, batch) => commit(batch, undefined, c),
    purgeBelowCut,
    position: () => position.streamSeq,
    leading: () => leads && !failed && holds(),
    async lead(holdsLease) {
      following = false;
      await inTurn(async () => {
        await stopReplica?.();
        await catchUp(replica);
        holds = holdsLease ?? (() => true);
        leads = true;
      });
      // The previous leader may have died between a cut and its purge: the purge is completed now.
      await purgeBelowCut().catch(() => undefined);
    },
    async stepDown() {
      leads = false;
      await staging.catch(() => undefined);
      await pending.catch(() => undefined);
      if (replica && !failed) await inTurn(() => follow(replica!));
    },
    replicate: (r) => inTurn(() => follow(r)),
    async caughtUpWithStream(timeoutMs) {
      if (leads) return true;
      const last = (await conn.jsm.streams.info(conn.stream)).state.last_seq;
      if (position.streamSeq >= last) return true;
      return new Promise<boolean>((resolve) => {
        const waiter = {
          streamSeq: last,
          resolve: () => {
            clearTimeout(timer);
            resolve(true);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          resolve(false);
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    async close() {
      leads = false;
      following = false;
      closing = true;
      clearInterval(stallCheck);
      await catching?.close().catch(() => undefined);
      await turn;
      await stopReplica?.();
      await pending.catch(() => undefined);
      await inner.close();
    },
  };
  await checkPosition();
  await catchUp();
  return log;
}
