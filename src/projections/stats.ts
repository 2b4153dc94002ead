import { eventsOf } from '../events/record-types.js';
import type { Projection } from './types.js';

/** Counts of what the log holds: records by type and events by category. */
export interface Stats {
  records: Record<string, number>;
  events: Record<string, number>;
}

/** A small summary fold, printed by `vigil replay` and used by health and the detection plan. */
export const statsProjection: Projection<Stats> = {
  name: 'stats',
  version: 1,
  initial: () => ({ records: {}, events: {} }),
  evolve(s, record) {
    s.records[record.type] = (s.records[record.type] ?? 0) + 1;
    for (const e of eventsOf(record.type, record.data)) s.events[e.category] = (s.events[e.category] ?? 0) + 1;
    return s;
  },
};
