import type { Database } from 'lmdb';
import type { LogCut } from '../../log/event-log.js';
import type { Replica } from '../../log/jetstream-log.js';
import type { LmdbEventLog } from '../../log/lmdb-log.js';
import { decodeRecord } from '../../log/record.js';
import { type LogRecord } from '../../kernel/record.js';
import { EVIDENCE_DBS } from '../../projections/evidence.js';
import type { ProjectionRuntime } from '../../projections/runtime.js';
import { forgetDroppedEvidence } from './expire.js';
import { asRecord, carriedBy } from '../../log/retention/plan.js';

/**
 * What a JetStream copy does when it reads a cut from the stream (docs/scale-out.md, "Retention"),
 * as the leader did in the cut's transaction (src/services/retention/expire.ts): the evidence index forgets
 * the events of every record the cut removed that it did not carry forward, and once the batch is
 * in the local copy the heap models are refolded from the cut (the records carried forward first).
 * Called before the batch is staged, while the removed records can still be read.
 */
export function followCut(runtime: ProjectionRuntime, log: LmdbEventLog): NonNullable<Replica['cut']> {
  // One refold at a time, in the order of the cuts: a refold that a later cut overtook (its records
  // removed under it) must not be the one that swaps its models in last.
  let refolds: Promise<void> = Promise.resolve();
  return (records: readonly LogRecord[], cut: LogCut) => {
    const kept = new Set<number>();
    for (const r of records) for (const c of carriedBy(r) ?? []) kept.add(c.seq);
    // Every record of the removed segments was judged: carried forward again (kept), or dropped.
    const dropped: LogRecord[] = [];
    const judge = (r: LogRecord) => {
      if (!kept.has(r.seq)) dropped.push(r);
    };
    for (const { bytes } of log.readRaw(log.first(), cut.firstSeq - 1)) {
      const r = decodeRecord(bytes);
      const held = carriedBy(r);
      if (!held) judge(r);
      else for (const c of held) judge(asRecord(c));
    }
    const evidence = runtime.db<Uint8Array>(EVIDENCE_DBS.byId) as unknown as Database<Uint8Array, string>;
    return {
      inTransaction() {
        forgetDroppedEvidence(evidence, dropped);
      },
      refold() {
        refolds = refolds.catch(() => undefined).then(() => runtime.refold(Math.max(cut.firstSeq, log.first())));
        return refolds;
      },
    };
  };
}
