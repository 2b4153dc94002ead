import { exhaustive } from '../events/read.js';
import type { WriteSideEvent } from '../events/normalized-event.js';
import type { InstanceRecord } from '../events/union.js';
import { instanceProjection, type FoldedRecord } from './types.js';

/** At most this many systems are tracked (the events of more are counted, not named). */
export const SYSTEMS_KEPT = 10_000;
/** At most this many sources (adapters) are tracked. */
export const SOURCES_KEPT = 1_000;
/** Hourly counts kept per system and source: the last day and the hour in progress. */
export const HOURS_KEPT = 25;

/** What arrived from one system (`adapter:instance`) or one source (`adapter`): when, how much, per hour. */
export interface Activity {
  /** `adapter:instance` of a system, the adapter of a source. */
  key: string;
  adapter: string;
  firstReportAt: string;
  /** When Vigil last accepted evidence from it (the record's time). */
  lastReportAt: string;
  /** The newest event time it sent. */
  lastEventTime: string;
  events: number;
  /** `[hour, events]`, oldest first: the hour is the record time's `YYYY-MM-DDTHH`. */
  hours: Array<[string, number]>;
}

/** Evidence arrival by system and by source, for the console: who reports, when last, at what rate. */
export interface ActivityState {
  systems: Map<string, Activity>;
  sources: Map<string, Activity>;
  /** Events not counted for a system or a source because the bounds were reached. */
  untracked: number;
}

/** The records that bring in evidence from outside (not the instance's own access events). */
const FROM_OUTSIDE = ['EventsIngested', 'RawRecordsIngested', 'CollectorSubmissionAccepted'] as const;

/** The evidence a record brought in from outside. */
function evidenceOf(r: FoldedRecord<InstanceRecord, (typeof FROM_OUTSIDE)[number]>): readonly WriteSideEvent[] {
  switch (r.type) {
    case 'EventsIngested':
    case 'RawRecordsIngested':
    case 'CollectorSubmissionAccepted':
      return r.data.events;
    default:
      return exhaustive(r, []);
  }
}

function count(
  map: Map<string, Activity>,
  cap: number,
  key: string,
  adapter: string,
  at: string,
  time: string,
): boolean {
  let a = map.get(key);
  if (!a) {
    if (map.size >= cap) return false;
    map.set(
      key,
      (a = { key, adapter, firstReportAt: at, lastReportAt: at, lastEventTime: time, events: 0, hours: [] }),
    );
  }
  a.events++;
  if (at > a.lastReportAt) a.lastReportAt = at;
  if (time > a.lastEventTime) a.lastEventTime = time;
  const hour = at.slice(0, 13);
  let i = a.hours.length;
  while (i > 0 && a.hours[i - 1]![0] > hour) i--;
  if (i > 0 && a.hours[i - 1]![0] === hour) a.hours[i - 1]![1]++;
  else a.hours.splice(i, 0, [hour, 1]);
  while (a.hours.length > HOURS_KEPT) a.hours.shift();
  return true;
}

/** Folds evidence arrival per system and per source (bounded, deterministic: record times only). */
export const activityProjection = instanceProjection({
  name: 'activity',
  version: 1,
  folds: FROM_OUTSIDE,
  initial: (): ActivityState => ({ systems: new Map(), sources: new Map(), untracked: 0 }),
  evolve(s, record) {
    for (const e of evidenceOf(record)) {
      const system = `${e.source.adapter}:${e.source.instance}`;
      if (!count(s.systems, SYSTEMS_KEPT, system, e.source.adapter, record.at, e.time)) s.untracked++;
      if (!count(s.sources, SOURCES_KEPT, e.source.adapter, e.source.adapter, record.at, e.time)) s.untracked++;
    }
    return s;
  },
  snapshot: (s) => ({ systems: [...s.systems.values()], sources: [...s.sources.values()], untracked: s.untracked }),
  restore(data) {
    const d = data as { systems: Activity[]; sources: Activity[]; untracked: number };
    return {
      systems: new Map(d.systems.map((a) => [a.key, a])),
      sources: new Map(d.sources.map((a) => [a.key, a])),
      untracked: d.untracked,
    };
  },
});
