import type { WriteSideEvent } from '../events/normalized-event.js';
import { indexKeysForEvent } from '../detection/logsources.js';
import { eventsCarried } from '../events/record-types.js';
import type { InstanceRecord } from '../events/union.js';
import { instanceProjection } from './types.js';

/** Fields remembered per source (enough for any rule; a source with more is reported as such). */
export const FIELDS_KEPT = 512;

/** The attributes every collector refusal event and every export state event carries (collector-rejection.ts, export-state.ts). */
const COLLECTOR_REFUSAL_FIELDS = ['reason', 'collectorId', 'message', 'sequence', 'expectedSequence', 'principal', 'source_ip'];
const EXPORT_STATE_FIELDS = ['destination', 'destination_kind', 'state', 'reason', 'lag_records', 'last_success_at'];

/** A record that shows a self-monitored part of Vigil in use: its source key and the fields of its events. */
function selfMonitored(record: InstanceRecord): { key: string; fields: readonly string[] } | undefined {
  if (record.type === 'CollectorEnrolled' || record.type === 'CollectorSubmissionAccepted') return { key: 'vigil:collector', fields: COLLECTOR_REFUSAL_FIELDS };
  if (record.type === 'ExportConfigurationRecorded' && record.data.destinations.length > 0) return { key: 'vigil:export', fields: EXPORT_STATE_FIELDS };
  return undefined;
}

/** What Vigil has seen of one source (a detection index key such as `zeek:dns` or `linux:prog:sshd`). */
export interface SourceSeen {
  lastIngestedAt: string;
  lastEventTime: string;
  events: number;
  fields: Set<string>;
}

/** Sources seen, by index key: the capabilities the detection plan checks rules against. */
export type SourcesState = Map<string, SourceSeen>;

/** Tracks, per detection source, when evidence last arrived and which attribute fields it carried. */
export const sourcesProjection = instanceProjection<SourcesState>({
  name: 'sources',
  version: 2,
  initial: () => new Map(),
  evolve(s, record) {
    const self = selfMonitored(record);
    if (self) {
      // Vigil watches its collectors and export destinations itself: once one is in use, the events
      // of `{product: vigil, service: collector|export}` are produced here whenever something fails.
      let seen = s.get(self.key);
      if (!seen) s.set(self.key, (seen = { lastIngestedAt: record.at, lastEventTime: record.at, events: 0, fields: new Set(self.fields) }));
      if (record.at > seen.lastIngestedAt) seen.lastIngestedAt = record.at;
      if (record.at > seen.lastEventTime) seen.lastEventTime = record.at;
    }
    const events: readonly WriteSideEvent[] = eventsCarried(record);
    for (const e of events) {
      for (const key of indexKeysForEvent(e)) {
        let seen = s.get(key);
        if (!seen) s.set(key, (seen = { lastIngestedAt: record.at, lastEventTime: e.time, events: 0, fields: new Set() }));
        seen.events++;
        // The record's own time: canonical UTC set by Vigil, unlike a client's ingestedAt.
        if (record.at > seen.lastIngestedAt) seen.lastIngestedAt = record.at;
        if (e.time > seen.lastEventTime) seen.lastEventTime = e.time;
        if (seen.fields.size < FIELDS_KEPT) for (const f in e.attributes) if (seen.fields.size < FIELDS_KEPT) seen.fields.add(f);
      }
    }
    return s;
  },
  snapshot: (s) => [...s.entries()].map(([k, v]) => [k, { ...v, fields: [...v.fields] }]),
  restore: (data) => new Map((data as Array<[string, Omit<SourceSeen, 'fields'> & { fields: string[] }]>).map(([k, v]) => [k, { ...v, fields: new Set(v.fields) }])),
});
