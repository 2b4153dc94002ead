/**
 * What an open JetStream log is made of and where it stands, shared by the jobs that make it up:
 * applying the stream's batches (jetstream-apply.ts), following (jetstream-follow.ts) and leading
 * (jetstream-lead.ts).
 */
import type { Database } from 'lmdb';
import { FatalStorageError, type LogHead } from './event-log.js';
import type { JetStreamConnection } from './jetstream-connect.js';
import type { CutWrites, Replica } from './jetstream-log.js';
import type { LmdbEventLog } from './lmdb-log.js';
import type { HeadSigner } from './head-signer.js';
import type { Frontier } from './merkle.js';

/** Where the local copy stands in the stream: the last batch message it holds and the last record's seq. */
export interface Position {
  readonly streamSeq: number;
  readonly seq: number;
}

/** The parts of an open JetStream log, fixed at open. */
export interface JetStreamParts {
  readonly conn: JetStreamConnection;
  /** The local copy, which serves every read. */
  readonly inner: LmdbEventLog;
  readonly positions: Database<Position, string>;
  readonly retryWindowMs: number;
  readonly cutWrites: CutWrites | undefined;
  readonly notice: (line: Record<string, unknown>) => void;
  readonly stallCheckMs: number;
  /**
   * The node's head signer (docs/scale-out.md, "Signed heads"): a leader signs each batch's head before
   * publishing it; every node checks the head a batch carries before folding it. Absent: nothing signed.
   */
  readonly heads: HeadSigner | undefined;
}

/** An open JetStream log: its parts, and what its jobs change as it follows, leads and fails. */
export interface JetStreamState extends JetStreamParts {
  /** Fails the log for good (the first failure stays), tells `onFatal` and throws the failure. */
  readonly fail: (err: unknown) => never;
  position: Position;
  failed: Error | undefined;
  closing: boolean;
  /** The consumer of a catch-up under way (closed with the log). */
  catching: { close(): Promise<void | Error> } | undefined;
  leads: boolean;
  holds: () => boolean;
  replica: Replica | undefined;
  pendingHead: LogHead;
  /** A leader's tree at `pendingHead` (batches published, not yet in the local copy): what their heads sign. */
  pendingTree: Frontier | undefined;
  /** The last signature asked for: a leader's batches are signed in order. */
  signing: Promise<unknown>;
  expectedLast: number;
  staging: Promise<unknown>;
  pending: Promise<unknown>;
  /** The last purge: the cut it was for and the first stream message it kept. */
  purged: { readonly firstSeq: number; readonly keep: number } | undefined;
  stopReplica: (() => Promise<void>) | undefined;
  /** Reads waiting for the local copy to hold a stream sequence (`caughtUpWithStream`). */
  readonly waiters: Set<{ readonly streamSeq: number; readonly resolve: () => void }>;
  /** The last of the steps that run one at a time (`inTurn`). */
  turn: Promise<unknown>;
  /** Whether this node follows the stream (neither leading, about to lead, nor closed). */
  following: boolean;
  stallCheck: NodeJS.Timeout | undefined;
  seenAt: number;
  refollowing: boolean;
}

/** The state of a log whose local copy stands at `position`: neither following nor leading, nothing in flight. */
export function initialState(parts: JetStreamParts, position: Position, onFatal: (err: Error) => void): JetStreamState {
  const s: JetStreamState = {
    ...parts,
    fail: (err: unknown): never => {
      const failed = (s.failed ??=
        err instanceof FatalStorageError
          ? err
          : new FatalStorageError(`log write failed, outcome unknown: ${(err as Error)?.message ?? String(err)}`));
      onFatal(failed);
      throw failed;
    },
    position,
    failed: undefined,
    closing: false,
    catching: undefined,
    leads: false,
    holds: () => true,
    replica: undefined,
    pendingHead: parts.inner.head(),
    pendingTree: undefined,
    signing: Promise.resolve(),
    expectedLast: position.streamSeq,
    staging: Promise.resolve(),
    pending: Promise.resolve(),
    purged: undefined,
    stopReplica: undefined,
    waiters: new Set(),
    turn: Promise.resolve(),
    following: false,
    stallCheck: undefined,
    seenAt: -1,
    refollowing: false,
  };
  return s;
}

/** Resolves the reads waiting for a stream sequence that the local copy now holds. */
export function wake(s: JetStreamState): void {
  for (const w of s.waiters)
    if (s.position.streamSeq >= w.streamSeq) {
      s.waiters.delete(w);
      w.resolve();
    }
}
