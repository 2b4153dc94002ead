import type { LogRecord } from '../kernel/record.js';
import type { FoldEngine } from './fold-engine.js';
import { createHeapModels, type HeapModels } from './heap-models.js';

/** Records read at a time by a refold from a cut, and the longest it folds before giving the writer a turn. */
const REFOLD_CHUNK = 2000;
const REFOLD_SLICE_MS = 10;

/**
 * Refolds the heap models from the retention cut at `firstSeq` (`ProjectionRuntime.refold`), as `e.refolding` until
 * the fresh models have replaced the current ones.
 */
export function refoldFromCut(e: FoldEngine, firstSeq: number): Promise<void> {
  const fresh = createHeapModels(e.opts.store, e.opts.projections);
  const run = foldFresh(e, fresh, firstSeq);
  e.refolding = run.finally(() => {
    if (e.refolding === tracked) e.refolding = undefined;
  });
  const tracked = e.refolding;
  return e.refolding;
}

/**
 * Folds the `fresh` heap models from the cut at `firstSeq` until they have caught up with every applied record, then
 * puts them in place of the current models.
 */
async function foldFresh(e: FoldEngine, fresh: HeapModels, firstSeq: number): Promise<void> {
  const { log } = e.opts;
  let last = firstSeq - 1;
  // Folded elsewhere when it can be (a failed worker costs only the time: all is folded here).
  const elsewhere = await e.opts.foldFromCut?.(firstSeq).catch(() => undefined);
  if (elsewhere && fresh.load(elsewhere.checkpoints)) last = elsewhere.seq;
  else for (const r of e.opts.carried?.all() ?? []) fresh.fold(r);
  for (;;) {
    // Committed records, a slice of REFOLD_SLICE_MS per turn so ingest keeps its turns; the
    // last step folds the staged ones and swaps at once.
    const until = performance.now() + REFOLD_SLICE_MS;
    let n = 0;
    let more = false;
    for (const r of log.read(last + 1, last + REFOLD_CHUNK)) {
      fresh.fold(r);
      last = r.seq;
      if ((more = ++n % 16 === 0 && performance.now() >= until)) break;
    }
    if (more || n === REFOLD_CHUNK) {
      await new Promise((r) => setImmediate(r));
      continue;
    }
    last = foldStaged(e.stagedRecords, fresh, last);
    if (last >= e.seq) break;
    await new Promise((r) => setImmediate(r));
  }
  e.heap = fresh;
}

/** Folds into `fresh` the staged records that follow `last` with no gap; returns the last seq it has folded. */
function foldStaged(staged: ReadonlyMap<number, LogRecord>, fresh: HeapModels, last: number): number {
  for (const s of [...staged.keys()].sort((a, b) => a - b)) {
    if (s > last + 1) break; // not readable yet: look again next turn, never fold past a gap
    if (s === last + 1) {
      fresh.fold(staged.get(s)!);
      last = s;
    }
  }
  return last;
}
