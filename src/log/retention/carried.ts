import type { Database, RootDatabase } from 'lmdb';
import { asInstanceRecord } from '../../events/read.js';
import type { LogRecord } from '../../kernel/record.js';
import { asRecord, carriedBy, type CarriedRecord } from './plan.js';

/** Name of the database that finds carried records by their original seq. */
export const CARRIED_DB = 'carried';

/** Where a carried record now is: the seq of its `RecordsCarriedForward` record and its place in it. */
type Place = [number, number];

/** Carried records by original seq: reads for queries, and the folds that start at a cut. */
export interface CarriedIndex {
  /** The original record of `seq`, when it was carried forward. */
  get(seq: number): LogRecord | undefined;
  /** Every carried record still in the live store, by original seq: what a fold from the cut folds first. */
  all(): LogRecord[];
  /** The writes of one expiry (inside its transaction): carried records' new places, dropped ones forgotten. */
  write(
    wrapperSeq: number | undefined,
    carried: readonly CarriedRecord[],
    dropped: ReadonlyArray<{ readonly seq: number }>,
  ): void;
}

/** Opens the carried-records database of `root`; `record` reads a live record by seq. */
export function openCarriedIndex(root: RootDatabase, record: (seq: number) => LogRecord | undefined): CarriedIndex {
  const db: Database<Place, number> = root.openDB({ name: CARRIED_DB, keyEncoding: 'uint32', cache: false });
  /** The records a `RecordsCarriedForward` record holds (`wrappers` keeps each decoded once, within one call). */
  const heldBy = (
    wrapper: number,
    wrappers?: Map<number, readonly CarriedRecord[] | undefined>,
  ): readonly CarriedRecord[] | undefined => {
    if (wrappers?.has(wrapper)) return wrappers.get(wrapper);
    const r = record(wrapper);
    const held = r && carriedBy(r);
    wrappers?.set(wrapper, held);
    return held;
  };
  const entry = (
    [wrapper, index]: Place,
    wrappers?: Map<number, readonly CarriedRecord[] | undefined>,
  ): LogRecord | undefined => {
    const c = heldBy(wrapper, wrappers)?.[index];
    return c ? asRecord(c) : undefined;
  };
  return {
    get(seq) {
      const place = db.get(seq);
      return place ? entry(place) : undefined;
    },
    all() {
      const out: LogRecord[] = [];
      // Thousands of records share one wrapper: it is decoded once, not once for each of them.
      const wrappers = new Map<number, readonly CarriedRecord[] | undefined>();
      for (const { value } of db.getRange({})) {
        const r = entry(value, wrappers);
        if (r) out.push(r);
      }
      return out;
    },
    write(wrapperSeq, carried, dropped) {
      for (const r of dropped) db.removeSync(r.seq);
      if (wrapperSeq !== undefined) carried.forEach((c, i) => db.putSync(c.seq, [wrapperSeq, i]));
    },
  };
}

/**
 * The carried-records writes of a cut batch that a JetStream copy reads from the stream (the
 * leader made them in its own transaction, src/services/retention/expire.ts): the batch's carried records
 * get their new places, and entries whose `RecordsCarriedForward` record the cut removed are
 * forgotten (every record of an expired segment was judged: carried again or dropped). Returns
 * the writes to run in the batch's transaction, or undefined for a batch that cuts nothing.
 */
export function carriedWritesOfCut(root: RootDatabase, batch: readonly LogRecord[]): (() => void) | undefined {
  const found = batch.find((r) => r.type === 'LogSegmentsExpired');
  const cut = found && asInstanceRecord(found);
  if (cut?.type !== 'LogSegmentsExpired') return undefined;
  const firstSeq = cut.data.firstSeq;
  const db: Database<Place, number> = root.openDB({ name: CARRIED_DB, keyEncoding: 'uint32', cache: false });
  return () => {
    const gone = [...db.getRange({})].filter(({ value }) => value[0] < firstSeq).map(({ key }) => key);
    for (const key of gone) db.removeSync(key);
    for (const r of batch) carriedBy(r)?.forEach((c, i) => db.putSync(c.seq, [r.seq, i]));
  };
}
