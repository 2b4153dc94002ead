import { indexKeysForEvent } from '../detection/logsources.js';
import { eventsCarried } from '../events/record-types.js';
import { instanceProjection } from './types.js';

/** Fields remembered per source (enough for any rule; a source with more is reported as such). */
export const FIELDS_KEPT = 512;

/** The source key of Vigil's collector self-monitoring events, and the attributes every such event carries. */
const COLLECTOR_SELF = 'vigil:collector';
const COLLECTOR_REFUSAL_FIELDS = ['reason', 'collectorId', 'message', 'sequence', 'expectedSequence', 'principal', 'source_ip'];

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
    if (record.type === 'CollectorEnrolled' || record.type === 'CollectorSubmissionAccepted') {
      // Vigil watches its collectors itself: once one is enrolled and sending, the events of
      // `{product: vigil, service: collector}` are produced here whenever a refusal happens.
      let seen = s.get(COLLECTOR_SELF);
      if (!seen) s.set(COLLECTOR_SELF, (seen = { lastIngestedAt: record.at, lastEventTime: record.at, events: 0, fields: new Set(COLLECTOR_REFUSAL_FIELDS) }));
      if (record.at > seen.lastIngestedAt) seen.lastIngestedAt = record.at;
      if (record.at > seen.lastEventTime) seen.lastEventTime = record.at;
    }
    for (const e of eventsCarried(record)) {
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
