import type { NormalizedEvent } from '../events/normalized-event.js';
import { RecordType, type RawRecordsIngested } from '../events/record-types.js';
import { hasEvent, type EvidenceLookup } from '../projections/evidence.js';
import { accept, type Decision } from './decision.js';
import type { IngestionResult } from './ingest-events.js';

/** A batch of raw records already normalized at the edge (normalizers never run in decide or replay). */
export interface IngestRaw {
  readonly normalizer: string;
  readonly logType?: string;
  readonly meshnet?: string;
  /** One entry per raw record: the record and the events it became. */
  readonly normalized: ReadonlyArray<{ readonly record: unknown; readonly events: readonly NormalizedEvent[] }>;
}

/**
 * Decides a normalized raw batch. Event ids derive from the raw record, so an id already stored
 * means the same record was ingested before: it is skipped, and a record whose events are all
 * known is not stored again. New records are kept, raw, beside their events.
 */
export function decideIngestRaw(evidence: EvidenceLookup, cmd: IngestRaw): Decision<IngestionResult> {
  const records: unknown[] = [];
  const events: NormalizedEvent[] = [];
  const seen = new Set<string>();
  const accepted: NormalizedEvent[] = [];
  for (const { record, events: evs } of cmd.normalized) {
    let fresh = evs.length === 0;
    for (const e of evs) {
      accepted.push(e);
      if (seen.has(e.id) || hasEvent(evidence, e.id)) continue;
      seen.add(e.id);
      events.push(e);
      fresh = true;
    }
    if (fresh) records.push(record);
  }
  const result: IngestionResult = { accepted, duplicates: accepted.length - events.length, alerts: [], incidents: [] };
  if (records.length === 0) return accept([], result);
  const data: RawRecordsIngested = {
    normalizer: cmd.normalizer,
    ...(cmd.logType !== undefined ? { logType: cmd.logType } : {}),
    ...(cmd.meshnet !== undefined ? { meshnet: cmd.meshnet } : {}),
    records,
    events,
  };
  return accept([{ type: RecordType.RawRecordsIngested, data }], result);
}
