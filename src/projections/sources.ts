import type { WriteSideEvent } from '../events/normalized-event.js';
import { indexKeysForEvent } from '../detection/logsources.js';
import { CARRYING_EVENT_TYPES, eventsCarried } from '../events/record-types.js';
import type { InstanceRecord } from '../events/union.js';
import { instanceProjection } from './types.js';

/** Fields remembered per source (enough for any rule; a source with more is reported as such). */
export const FIELDS_KEPT = 512;

/**
 * The attributes every collector refusal event and every export state event carries (collector-rejection.ts,
 * export-state.ts).
 */
const COLLECTOR_REFUSAL_FIELDS = [
  'reason',
  'collectorId',
  'message',
  'sequence',
  'expectedSequence',
  'principal',
  'source_ip',
];
const EXPORT_STATE_FIELDS = ['destination', 'destination_kind', 'state', 'reason', 'lag_records', 'last_success_at'];

/** A record that shows a self-monitored part of Vigil in use: its source key and the fields of its events. */
function selfMonitored(record: InstanceRecord): { key: string; fields: readonly string[] } | undefined {
  if (record.type === 'CollectorEnrolled' || record.type === 'CollectorSubmissionAccepted')
    return { key: 'vigil:collector', fields: COLLECTOR_REFUSAL_FIELDS };
  if (record.type === 'ExportConfigurationRecorded' && record.data.destinations.length > 0)
    return { key: 'vigil:export', fields: EXPORT_STATE_FIELDS };
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

/**
 * Sources remembered: the most recently active. Program names, Windows channels and instances are
 * whatever senders write, so a sender making up a new one per record would otherwise grow the model
 * (and every checkpoint) without end; past it the least recently active source is forgotten (the
 * one whose last record came first).
 */
export const SOURCES_KEPT = 4_096;

/** The source of `key`, made when new (forgetting the least recently active one when SOURCES_KEPT are remembered). */
function sourceOf(
  s: SourcesState,
  key: string,
  at: string,
  eventTime: string,
  fields: readonly string[] = [],
): SourceSeen {
  let seen = s.get(key);
  if (!seen) {
    // The model keeps its sources in the order they were last active (see `active`): the first is the stalest.
    if (s.size >= SOURCES_KEPT) s.delete(s.keys().next().value!);
    s.set(key, (seen = { lastIngestedAt: at, lastEventTime: eventTime, events: 0, fields: new Set(fields) }));
  }
  return seen;
}

/** A source active in a record at `at`: its time advances, and it moves to the end of the model's order. */
function active(s: SourcesState, key: string, seen: SourceSeen, at: string): void {
  if (at <= seen.lastIngestedAt) return;
  seen.lastIngestedAt = at;
  s.delete(key);
  s.set(key, seen);
}

/** Tracks, per detection source, when evidence last arrived and which attribute fields it carried. */
export const sourcesProjection = instanceProjection({
  name: 'sources',
  // 3: at most SOURCES_KEPT sources.
  version: 3,
  // The events of evidence records, and the records that show a self-monitored part in use (`selfMonitored`).
  folds: [...CARRYING_EVENT_TYPES, 'CollectorEnrolled', 'ExportConfigurationRecorded'],
  initial: (): SourcesState => new Map(),
  evolve(s, record) {
    const self = selfMonitored(record);
    if (self) {
      // Vigil watches its collectors and export destinations itself: once one is in use, the events
      // of `{product: vigil, service: collector|export}` are produced here whenever something fails.
      const seen = sourceOf(s, self.key, record.at, record.at, self.fields);
      active(s, self.key, seen, record.at);
      if (record.at > seen.lastEventTime) seen.lastEventTime = record.at;
    }
    const events: readonly WriteSideEvent[] = eventsCarried(record);
    for (const e of events) {
      for (const key of indexKeysForEvent(e)) {
        const seen = sourceOf(s, key, record.at, e.time);
        seen.events++;
        // The record's own time: canonical UTC set by Vigil, unlike a client's ingestedAt.
        active(s, key, seen, record.at);
        if (e.time > seen.lastEventTime) seen.lastEventTime = e.time;
        if (seen.fields.size < FIELDS_KEPT)
          for (const f in e.attributes) if (seen.fields.size < FIELDS_KEPT) seen.fields.add(f);
      }
    }
    return s;
  },
  snapshot: (s) => [...s.entries()].map(([k, v]) => [k, { ...v, fields: [...v.fields] }]),
  restore: (data) =>
    new Map(
      (data as Array<[string, Omit<SourceSeen, 'fields'> & { fields: string[] }]>).map(([k, v]) => [
        k,
        { ...v, fields: new Set(v.fields) },
      ]),
    ),
});
