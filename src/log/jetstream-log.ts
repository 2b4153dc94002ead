import type { Database } from 'lmdb';
import { NotLeaderError, type LogCut } from './event-log.js';
import type { JetStreamConnection } from './jetstream-connect.js';
import { openLmdbLog, type InTransaction, type LmdbEventLog } from './lmdb-log.js';
import type { LmdbStore } from './lmdb-store.js';
import type { HeadSigner } from './head-signer.js';
import { type LogRecord, type NewRecord } from '../kernel/record.js';
import { DEFAULT_RETRY_WINDOW_MS, FOLLOW_EXPIRES_MS } from './jetstream-batch.js';
import { initialState, type JetStreamState, type Position } from './jetstream-state.js';
import { checkCopiedFromStream, checkPosition, startBehindPurge } from './jetstream-open-checks.js';
import { caughtUpWithStream, catchUp, follow, inTurn } from './jetstream-follow.js';
import { lead, purgeBelowCut, stageAsLeader, stepDown } from './jetstream-lead.js';

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
  /** Signs the local copy's head on every commit (each node its own signer: docs/scale-out.md). */
  readonly signer?: HeadSigner;
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
  await startBehindPurge(store, conn, positions, stateAtOpen);
  // The leader signs each batch's head before publishing it: the local copy writes the head it came with.
  const inner = openLmdbLog(store, onFatal, opts.signer ? { signer: opts.signer, headsFromCaller: true } : {});
  const position: Position = positions.get('position') ?? { streamSeq: 0, seq: 0 };
  checkCopiedFromStream(store, inner, position);
  const parts = { conn, inner, positions, retryWindowMs, cutWrites, notice, stallCheckMs, heads: opts.signer };
  const s = initialState(parts, position, onFatal);
  // Everything but appending is the local copy's.
  const log: JetStreamEventLog = {
    ...inner,
    stage: (batch, inTransaction, cut) => stageAsLeader(s, batch, inTransaction, cut),
    head: () => s.pendingHead,
    append: (batch, inTransaction) => commit(s, batch, inTransaction),
    removePrefix: (c, batch) => commit(s, batch, undefined, c),
    purgeBelowCut: () => purgeBelowCut(s),
    position: () => s.position.streamSeq,
    leading: () => s.leads && !s.failed && s.holds(),
    lead: (holdsLease) => lead(s, holdsLease),
    stepDown: () => stepDown(s),
    replicate: (r) => inTurn(s, () => follow(s, r)),
    caughtUpWithStream: (timeoutMs) => caughtUpWithStream(s, timeoutMs),
    close: () => closeLog(s),
  };
  await checkPosition(store, conn, inner, s.position, stateAtOpen.first_seq);
  await catchUp(s);
  return log;
}

/** Stages a batch and resolves with its records once it is durable (in the stream and the local copy). */
async function commit(
  s: JetStreamState,
  batch: readonly NewRecord[],
  inTransaction?: InTransaction,
  cut?: LogCut,
): Promise<LogRecord[]> {
  const staged = stageAsLeader(s, batch, inTransaction, cut);
  await staged.durable;
  return [...staged.records];
}

/** Stops leading and following, lets the steps and appends under way settle, then closes the local copy. */
async function closeLog(s: JetStreamState): Promise<void> {
  s.leads = false;
  s.following = false;
  s.closing = true;
  clearInterval(s.stallCheck);
  await s.catching?.close().catch(() => undefined);
  await s.turn;
  await s.stopReplica?.();
  await s.pending.catch(() => undefined);
  await s.inner.close();
}
