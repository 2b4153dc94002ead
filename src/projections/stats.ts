import type { WriteSideEvent } from '../events/normalized-event.js';
import { eventsCarried } from '../events/record-types.js';
import { INSTANCE_EVENT_TYPES, instanceProjection } from './types.js';

/** Counts of what the log holds: records by type and events by category. */
export interface Stats {
  records: Record<string, number>;
  events: Record<string, number>;
}

/**
 * A small summary fold, printed by `vigil replay` and used by health and the detection plan. Records
 * count under the type they are read as (a legacy `DetectionHits` as `DetectionHitsRecorded`).
 */
export const statsProjection = instanceProjection({
  name: 'stats',
  version: 1,
  // Every record counts.
  folds: INSTANCE_EVENT_TYPES,
  initial: (): Stats => ({ records: {}, events: {} }),
  evolve(s, record) {
    s.records[record.type] = (s.records[record.type] ?? 0) + 1;
    const events: readonly WriteSideEvent[] = eventsCarried(record);
    for (const e of events) s.events[e.category] = (s.events[e.category] ?? 0) + 1;
    return s;
  },
});
