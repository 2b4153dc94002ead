/**
 * What an open read fold is made of and where it stands, shared by its jobs: folding the log
 * (read-fold.ts) and forgetting what retention cuts removed (read-expiry.ts).
 */
import type { Database, RootDatabase } from 'lmdb';
import type { LogRecord } from '../../kernel/record.js';
import type { IndexKey, IndexReader, IndexWriter } from '../types.js';
import { packState, unpackState } from '../heap-models.js';
import { LAYOUT_VERSION, type Checkpoint, type Meta } from './read-env.js';
import type { Expiry, Swept } from './read-expiry.js';
import type { LogReader, ReadProjections } from './read-fold.js';

/** An open read fold: its log, models and databases, and how far it folded. */
export interface FoldState {
  readonly env: RootDatabase;
  readonly log: LogReader;
  readonly projections: ReadProjections;
  readonly meta: Database<Meta, string>;
  readonly checkpoints: Database<Checkpoint, string>;
  readonly dbs: ReadonlyMap<string, Database<unknown, IndexKey>>;
  readonly reader: IndexReader;
  readonly writer: IndexWriter;
  /** The databases a cut's sweep goes through, each with how its entries name their record. */
  readonly swept: readonly Swept[];
  /** The models' versions and the boot id, recorded in the meta. */
  readonly versions: Record<string, number>;
  readonly boot: string;
  readonly chunk: number;
  readonly checkpointEvery: number;
  readonly halted: () => boolean;
  readonly states: Map<string, unknown>;
  /**
   * Checkpointed heap states, unpacked on first use: a rebuild right after opening (`vigil replay`)
   * never pays for them, and while they are packed the stored checkpoints are the current states.
   */
  readonly packed: Map<string, Uint8Array>;
  /** The last seq folded into every read model. */
  seq: number;
  /** The first seq the read models were folded from: a cut past it means they still hold what it removed. */
  origin: number;
  sinceCheckpoint: number;
  expiry: Expiry | undefined;
}

/** The meta that says the read models hold the log up to `at`, and whether the read side was shut down. */
export function metaOf(s: FoldState, at: number, clean: boolean): Meta {
  return { layout: LAYOUT_VERSION, seq: at, versions: s.versions, bootId: s.boot, clean, origin: s.origin };
}

/** The current heap states, unpacked from their checkpoints when still packed. */
export function current(s: FoldState): Map<string, unknown> {
  if (s.packed.size > 0) {
    for (const p of s.projections.heap) s.states.set(p.name, unpackState(p, s.packed.get(p.name)!));
    s.packed.clear();
  }
  return s.states;
}

/** Folds `record` into the heap states in `into` (the current ones, or those folded again from a cut). */
export function evolveHeap(s: FoldState, into: Map<string, unknown>, record: LogRecord): void {
  for (const p of s.projections.heap) into.set(p.name, p.evolve(into.get(p.name), record));
}

/** Writes the heap projections' checkpoints at the fold's seq. */
export function writeCheckpoints(s: FoldState): void {
  if (s.packed.size > 0) return; // nothing folded since they were read
  s.env.transactionSync(() => {
    for (const p of s.projections.heap) {
      const state = s.states.get(p.name);
      s.checkpoints.putSync(p.name, { version: p.version, seq: s.seq, state: packState(p, state) });
    }
  });
}

/** Empties every read model (the index databases, the checkpoints, the heap states): the fold starts at record 1. */
export function clearModels(s: FoldState): void {
  s.env.transactionSync(() => {
    for (const db of s.dbs.values()) db.clearSync();
    s.checkpoints.clearSync();
  });
  s.packed.clear();
  for (const p of s.projections.heap) s.states.set(p.name, p.initial());
  s.seq = 0;
}
