/**
 * How a JetStream log's local copy keeps up with the stream: catching up to the stream's last
 * message, following it as batches arrive, replacing a consumer that stalled, and the reads that
 * wait for the copy to catch up.
 */
import { DeliverPolicy } from '@nats-io/jetstream';
import type { Replica } from './jetstream-log.js';
import type { StagedBatch } from './lmdb-log.js';
import { FOLLOW_EXPIRES_MS, HEAD_HEADER } from './jetstream-batch.js';
import { applyMessage } from './jetstream-apply.js';
import type { JetStreamState } from './jetstream-state.js';

/** Applies every batch after the local position up to the stream's last message now. */
export async function catchUp(s: JetStreamState, replica?: Replica): Promise<void> {
  const { conn } = s;
  const last = (await conn.jsm.streams.info(conn.stream)).state.last_seq;
  if (last < s.position.streamSeq)
    throw new Error(
      `the local copy holds stream message ${s.position.streamSeq} and the stream ${conn.stream} ends at ${last}: ` +
        `the stream is not the one this store copied`,
    );
  // A consumer that delivers nothing for a check period stalled (see STALL_CHECK_MS): another one
  // takes over from where the copy stands.
  for (let attempt = 1; s.position.streamSeq < last; attempt++) {
    if (s.failed) throw s.failed;
    if (s.closing) return;
    if (attempt > 1)
      s.notice({
        level: 'warn',
        msg: 'catching up with the stream stalled: going on with a new consumer',
        position: s.position.streamSeq,
        streamLast: last,
        attempt,
      });
    const consumer = await conn.js.consumers.get(conn.stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: s.position.streamSeq + 1,
    });
    const messages = await consumer.consume({ expires: FOLLOW_EXPIRES_MS });
    s.catching = messages;
    const idle = setTimeout(() => {
      void messages.close().catch(() => undefined);
    }, s.stallCheckMs);
    let staged: StagedBatch | undefined;
    try {
      for await (const m of messages) {
        idle.refresh();
        if (m.seq <= s.position.streamSeq) continue;
        staged = applyMessage(s, m.seq, m.data, replica, m.headers?.get(HEAD_HEADER) || undefined);
        if (m.seq >= last) break;
      }
    } finally {
      clearTimeout(idle);
      s.catching = undefined;
      await messages.close().catch(() => undefined);
    }
    await staged?.durable;
  }
}

/** Runs `step` once the steps before it settled. */
export function inTurn<T>(s: JetStreamState, step: () => Promise<T>): Promise<T> {
  // Following, leading and replacing a stalled consumer run one at a time: two consumers applying
  // batches at once would each see the other's as a skipped message.
  const next = s.turn.then(step);
  s.turn = next.catch(() => undefined);
  return next;
}

/**
 * Replaces the follower's consumer when the copy stayed at one position for a whole check
 * period while the stream holds more (see STALL_CHECK_MS); a copy that moved is left alone.
 */
async function checkProgress(s: JetStreamState): Promise<void> {
  if (!s.following || s.leads || s.failed || s.refollowing) return;
  const at = s.position.streamSeq;
  if (at !== s.seenAt) {
    s.seenAt = at;
    return;
  }
  const last = (await s.conn.jsm.streams.info(s.conn.stream)).state.last_seq;
  if (s.position.streamSeq !== at || last <= at) return;
  s.refollowing = true;
  try {
    await inTurn(s, async () => {
      if (!s.following || s.leads || s.failed || !s.replica || s.position.streamSeq !== at) return;
      s.notice({
        level: 'warn',
        msg: 'the local copy stopped following the stream: following again with a new consumer',
        position: at,
        streamLast: last,
        stalledForMs: s.stallCheckMs,
      });
      await follow(s, s.replica);
    });
  } finally {
    s.refollowing = false;
  }
}

/** Catches the local copy up with the stream, then applies its batches as they arrive; resolves with the stop. */
export async function follow(s: JetStreamState, r: Replica): Promise<() => Promise<void>> {
  const { conn } = s;
  s.replica = r;
  await s.stopReplica?.();
  if (s.closing) return async () => {};
  s.following = true;
  s.stallCheck ??= setInterval(() => {
    checkProgress(s).catch(() => undefined);
  }, s.stallCheckMs).unref();
  await catchUp(s, r);
  if (s.closing) return async () => {};
  const consumer = await conn.js.consumers.get(conn.stream, {
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: s.position.streamSeq + 1,
  });
  // Pulls that expire every 5 s (heartbeats every 2.5 s): a consumer lost with its server is
  // noticed and recreated in seconds, not after the default 30 s.
  const messages = await consumer.consume({ expires: FOLLOW_EXPIRES_MS });
  const running = (async () => {
    for await (const m of messages) {
      if (s.leads) break;
      if (m.seq <= s.position.streamSeq) continue;
      try {
        s.pending = applyMessage(s, m.seq, m.data, r, m.headers?.get(HEAD_HEADER) || undefined).durable.catch(s.fail);
      } catch (err) {
        s.fail(err);
      }
    }
  })().catch((err: unknown) => {
    // The consumer gave up (it could not be recreated): the progress check replaces it.
    if (s.following && !s.failed)
      s.notice({ level: 'warn', msg: 'the stream consumer ended', error: (err as Error)?.message ?? String(err) });
  });
  const stop = async () => {
    await messages.close().catch(() => undefined);
    await running;
    await s.pending.catch(() => undefined);
    if (s.stopReplica === stop) s.stopReplica = undefined;
  };
  s.stopReplica = stop;
  return stop;
}

/**
 * Resolves once the local copy holds every batch the stream held when called (true), or with false
 * after `timeoutMs`. A leader holds them already.
 */
export async function caughtUpWithStream(s: JetStreamState, timeoutMs: number): Promise<boolean> {
  if (s.leads) return true;
  const last = (await s.conn.jsm.streams.info(s.conn.stream)).state.last_seq;
  if (s.position.streamSeq >= last) return true;
  return new Promise<boolean>((resolve) => {
    const waiter = {
      streamSeq: last,
      resolve: () => {
        clearTimeout(timer);
        resolve(true);
      },
    };
    const timer = setTimeout(() => {
      s.waiters.delete(waiter);
      resolve(false);
    }, timeoutMs);
    s.waiters.add(waiter);
  });
}
