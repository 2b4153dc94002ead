/**
 * The checks of a JetStream log's local copy against its stream when the log opens: an empty copy
 * behind a purged prefix starts from the stream's last cut, and a copy that is not a prefix of the
 * stream (another stream, a store that held an LMDB log) is refused.
 */
import type { Database } from 'lmdb';
import type { StreamState } from '@nats-io/jetstream';
import type { LogCut, LogHead } from './event-log.js';
import type { JetStreamConnection } from './jetstream-connect.js';
import type { LmdbEventLog } from './lmdb-log.js';
import type { LmdbStore } from './lmdb-store.js';
import { hashBytes } from './record.js';
import { startFromCut } from './jetstream-cut.js';
import { unpackBatch } from './jetstream-batch.js';
import type { Position } from './jetstream-state.js';

/** Starts the store from the stream's last cut when the stream no longer holds the messages the store lacks. */
export async function startBehindPurge(
  store: LmdbStore,
  conn: JetStreamConnection,
  positions: Database<Position, string>,
  stateAtOpen: StreamState,
): Promise<void> {
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
}

/** Refuses a store whose records did not all come from a stream (`position` is where its copy stands). */
export function checkCopiedFromStream(store: LmdbStore, inner: LmdbEventLog, position: Position): void {
  if (position.seq !== inner.head().seq) {
    throw new Error(
      `refusing to start: the store at ${store.path} holds ${inner.head().seq} records that did not come from a ` +
        `JetStream stream: a JetStream node needs its own store directory`,
    );
  }
}

/**
 * Refuses a local copy whose last batch is not the stream's message at its position, or whose next
 * messages the stream purged while the node was away (`streamFirst`: the stream's first message at open).
 */
export async function checkPosition(
  store: LmdbStore,
  conn: JetStreamConnection,
  inner: LmdbEventLog,
  position: Position,
  streamFirst: number,
): Promise<void> {
  if (position.streamSeq === 0) return;
  // A copy started from a cut has no message at its position yet: the next one is checked against the cut's hash.
  const c = inner.cut();
  if (c && position.seq === c.firstSeq - 1) return;
  const stored = await conn.jsm.streams.getMessage(conn.stream, { seq: position.streamSeq });
  if (!stored && streamFirst > position.streamSeq + 1) {
    throw new Error(
      `refusing to start: the stream ${conn.stream} no longer holds the messages after this store's position ` +
        `(${position.streamSeq}): retention purged them up to ${streamFirst - 1} while this node was ` +
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
