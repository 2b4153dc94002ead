/**
 * How the read side forgets what a retention cut removed, a step at a time: the index entries of
 * removed records go by a sweep, and the heap models are folded again from the cut beside the
 * current ones, which they replace once caught up.
 */
import type { IndexKey, IndexProjection } from '../types.js';
import { evolveHeap, metaOf, writeCheckpoints, type FoldState } from './read-fold-state.js';

/**
 * What a cut's expiry has done so far: the sweep's place, and the heap models folded again beside the current ones.
 */
export interface Expiry {
  readonly first: number;
  readonly carried: ReadonlySet<number>;
  sweep: number;
  from: IndexKey | undefined;
  fresh: Map<string, unknown> | undefined;
  freshSeq: number;
}

/** An index database that a cut's sweep goes through, with how its entries name the record that wrote them. */
export interface Swept {
  readonly name: string;
  readonly recordOf: NonNullable<IndexProjection['recordOf']>;
}

/** Every database of the indexes, for the sweep; refuses an index that does not say which record wrote an entry. */
export function sweptDbs(indexes: readonly IndexProjection[]): Swept[] {
  const unswept = indexes.find((ix) => ix.recordOf === undefined);
  if (unswept) throw new Error(`read-side index ${unswept.name} does not say which record wrote an entry (recordOf)`);
  return indexes.flatMap((ix) => ix.dbs.map((name) => ({ name, recordOf: ix.recordOf! })));
}

/** Starts forgetting what the log's last cut removed, when it cut past the first seq the models were folded from. */
export function startExpiry(s: FoldState): void {
  // A cut past the first seq the models were folded from: they forget what it removed, a step at a time.
  const first = s.log.first?.() ?? 1;
  if (s.expiry === undefined && first > s.origin) {
    s.expiry = {
      first,
      carried: new Set((s.log.carried?.() ?? []).map((r) => r.seq)),
      sweep: 0,
      from: undefined,
      fresh: undefined,
      freshSeq: 0,
    };
  }
}

/**
 * Goes on forgetting what the cut removed until `budgetMs` is spent; once the refolded heap models
 * caught up they replace the current ones. Returns whether it is done.
 */
export function expireStep(s: FoldState, budgetMs: number): boolean {
  const x = s.expiry;
  if (x === undefined) return true;
  const deadline = performance.now() + budgetMs;
  if (!sweep(s, x, deadline)) return false;
  if (!refold(s, x, deadline)) return false;
  s.packed.clear();
  for (const [name, state] of x.fresh!) s.states.set(name, state);
  s.origin = x.first;
  s.expiry = undefined;
  writeCheckpoints(s);
  s.meta.putSync('meta', metaOf(s, s.seq, false));
  return true;
}

/** Sweeps the index databases until `deadline`; returns whether the sweep is done. */
function sweep(s: FoldState, x: Expiry, deadline: number): boolean {
  // 1. The sweep: entries of records before the cut that it did not carry forward go.
  while (x.sweep < s.swept.length) {
    const { name, recordOf } = s.swept[x.sweep]!;
    const db = s.dbs.get(name)!;
    const gone: IndexKey[] = [];
    let stoppedAt: IndexKey | undefined;
    let k = 0;
    for (const { key, value } of db.getRange(x.from === undefined ? {} : { start: x.from })) {
      if (++k % 256 === 0 && performance.now() >= deadline) {
        stoppedAt = key;
        break;
      }
      const seq = recordOf(name, key, value);
      if (seq < x.first && !x.carried.has(seq)) gone.push(key);
    }
    if (gone.length > 0)
      s.env.transactionSync(() => {
        for (const key of gone) db.removeSync(key as never);
      });
    if (stoppedAt !== undefined) {
      x.from = stoppedAt;
      return false;
    }
    x.sweep++;
    x.from = undefined;
  }
  return true;
}

/** Folds the heap models again from the cut, until `deadline`; returns whether they caught up with the fold. */
function refold(s: FoldState, x: Expiry, deadline: number): boolean {
  // 2. The heap models, folded again from the cut beside the current ones; swapped in once caught up.
  if (x.fresh === undefined) {
    x.fresh = new Map(s.projections.heap.map((p) => [p.name, p.initial()]));
    for (const r of s.log.carried?.() ?? []) evolveHeap(s, x.fresh, r);
    x.freshSeq = x.first - 1;
  }
  while (x.freshSeq < s.seq) {
    s.log.renew?.();
    for (const r of s.log.read(x.freshSeq + 1, s.seq)) {
      evolveHeap(s, x.fresh, r);
      x.freshSeq = r.seq;
      if (performance.now() >= deadline) break;
    }
    if (x.freshSeq < s.seq && performance.now() >= deadline) return false;
    // Records a later cut removed under the refold: the next expiry folds from that cut.
    if (x.freshSeq < s.seq) x.freshSeq = s.seq;
  }
  return true;
}
