import type { Database } from 'lmdb';
import { Packr } from 'msgpackr';
import type { LmdbStore } from '../log/lmdb-store.js';
import { unpackKeepingKeys } from '../log/record.js';
import { type LogRecord } from '../kernel/record.js';
import type { Projection } from './types.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** A projection's state packed for a checkpoint (its `snapshot`, or the state itself). */
export function packState<S>(p: Projection<S>, state: S): Uint8Array {
  return packr.pack(p.snapshot ? p.snapshot(state) : state);
}

/** A projection's state back from `packState`. */
export function unpackState<S>(p: Projection<S>, packed: Uint8Array): S {
  // A model may hold client-chosen keys (an alert's evidence): `__proto__` among them comes back as it was.
  const data = unpackKeepingKeys(packed);
  return p.restore ? p.restore(data) : (data as S);
}

/** A heap projection's checkpoint: its version, the last seq it folded and its packed state. */
export interface Checkpoint {
  version: number;
  seq: number;
  state: Uint8Array;
}

/**
 * The write side's in-memory projections: their states, the seq each has folded, and their
 * checkpoints in the store (so a restart folds only the tail of the log).
 */
export interface HeapModels {
  state<S>(name: string): S;
  /** Folds one record into every projection that has not folded it yet. */
  fold(record: LogRecord): void;
  /** Restores every checkpoint that matches its projection's version and is not past `head`. */
  restore(head: number): void;
  /**
   * Takes the given checkpoints (one per projection, of its version, as `snapshot` makes them); false, changing
   * nothing, when one is missing, of another version or unreadable.
   */
  load(checkpoints: ReadonlyArray<[string, Checkpoint]>): boolean;
  /** The lowest seq every projection has folded. */
  lowestSeq(): number;
  /** The checkpoints of the current states, packed now (written later, in a transaction). */
  snapshot(): Array<[string, Checkpoint]>;
  write(snapshot: ReadonlyArray<[string, Checkpoint]>): void;
  /** Back to every projection's initial state. */
  reset(): void;
}

/** The heap models of `projections`, checkpointed in `store`. */
export function createHeapModels(store: LmdbStore, projections: readonly Projection<unknown>[]): HeapModels {
  const checkpoints: Database<Checkpoint, string> = store.db('projection-checkpoints');
  const states = new Map<string, unknown>(projections.map((p) => [p.name, p.initial()]));
  const heapSeq = new Map<string, number>(projections.map((p) => [p.name, 0]));
  return {
    state: <S>(name: string) => {
      if (!states.has(name)) throw new Error(`no projection named ${name}`);
      return states.get(name) as S;
    },
    fold(record) {
      for (const p of projections) {
        if (record.seq <= heapSeq.get(p.name)!) continue;
        states.set(p.name, p.evolve(states.get(p.name), record));
        heapSeq.set(p.name, record.seq);
      }
    },
    restore(head) {
      for (const p of projections) {
        const cp = checkpoints.get(p.name);
        if (cp && cp.version === p.version && cp.seq <= head) {
          states.set(p.name, unpackState(p, cp.state));
          heapSeq.set(p.name, cp.seq);
        }
      }
    },
    load(given) {
      const byName = new Map(given);
      if (projections.some((p) => byName.get(p.name)?.version !== p.version)) return false;
      let loaded: unknown[];
      try {
        loaded = projections.map((p) => unpackState(p, byName.get(p.name)!.state));
      } catch {
        return false;
      }
      projections.forEach((p, i) => {
        states.set(p.name, loaded[i]);
        heapSeq.set(p.name, byName.get(p.name)!.seq);
      });
      return true;
    },
    lowestSeq: () => Math.min(...heapSeq.values()),
    snapshot: () =>
      projections.map((p) => {
        const state = states.get(p.name);
        return [p.name, { version: p.version, seq: heapSeq.get(p.name)!, state: packState(p, state) }];
      }),
    write(snapshot) {
      for (const [name, cp] of snapshot) checkpoints.putSync(name, cp);
    },
    reset() {
      for (const p of projections) {
        states.set(p.name, p.initial());
        heapSeq.set(p.name, 0);
      }
    },
  };
}
