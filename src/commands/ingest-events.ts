import type { NormalizedEvent } from '../events/normalized-event.js';
import { RecordType, type EventsIngested } from '../events/record-types.js';
import { lookupEvent, sameEvent, type EvidenceLookup } from '../projections/evidence.js';
import { accept, reject, type Decision } from './decision.js';

/** What ingestion answers (spec 2.2); alerts and incidents come from detection. */
export interface IngestionResult {
  readonly accepted: NormalizedEvent[];
  /**
   * How many of the accepted events were already stored (or repeated in the batch): nothing new was written for them.
   */
  readonly duplicates: number;
  readonly alerts: unknown[];
  readonly incidents: unknown[];
}

/** The events of a batch that are new, or the ids that clash with stored or sibling events. */
export function newEvents(
  evidence: EvidenceLookup,
  events: readonly NormalizedEvent[],
): { fresh: NormalizedEvent[]; conflicts: string[] } {
  const fresh: NormalizedEvent[] = [];
  const conflicts: string[] = [];
  const inBatch = new Map<string, NormalizedEvent>();
  const decoded = new Map<number, readonly NormalizedEvent[]>();
  for (const e of events) {
    // Content is compared only when an id repeats, so a batch of new events costs one lookup each.
    const seen = inBatch.get(e.id) ?? lookupEvent(evidence, e.id, decoded);
    if (seen === undefined) {
      inBatch.set(e.id, e);
      fresh.push(e);
    } else if (!sameEvent(seen, e)) conflicts.push(e.id);
  }
  return { fresh, conflicts };
}

/**
 * Decides a batch of validated NormalizedEvents: idempotent by id (an already stored identical
 * event is not stored again), and the whole batch is refused when an id is reused with other content.
 */
export function decideIngestEvents(
  evidence: EvidenceLookup,
  events: readonly NormalizedEvent[],
): Decision<IngestionResult> {
  const { fresh, conflicts } = newEvents(evidence, events);
  if (conflicts.length > 0) {
    const shown = [...new Set(conflicts)];
    return reject(
      'conflict',
      `event ids already stored with different content: ` +
        `${shown.slice(0, 20).join(', ')}${shown.length > 20 ? ` and ${shown.length - 20} more` : ''}`,
      { details: { conflictingIds: shown.slice(0, 1000) } },
    );
  }
  const result: IngestionResult = {
    accepted: [...events],
    duplicates: events.length - fresh.length,
    alerts: [],
    incidents: [],
  };
  if (fresh.length === 0) return accept([], result);
  return accept([{ type: RecordType.EventsIngested, data: { events: fresh } satisfies EventsIngested }], result);
}
