import { eventsCarried } from '../events/record-types.js';
import { instanceProjection } from './types.js';

/** Hourly buckets kept per source: two days, enough for the console's 24-hour charts. */
export const HOURS_KEPT = 48;
/** Sources (adapters) and systems (source instances) tracked at most; later ones are counted under `other`. */
export const SOURCES_KEPT = 64;
export const SYSTEMS_KEPT = 2048;

/** Events stored per source adapter by hour of storage, and the systems each one reports for. */
export interface SourceRates {
  /** The hour (ISO, `2026-11-23T19`) of the newest record folded: the end of the kept window. */
  latestHour: string;
  /** adapter -> hour -> events stored in that hour. */
  byAdapter: Record<string, Record<string, number>>;
  /** system (the source instance, usually a host) -> when it last reported, through which adapter, and how many events. */
  systems: Record<string, { lastAt: string; adapter: string; events: number }>;
}

const hourOf = (iso: string) => iso.slice(0, 13);
const hoursBefore = (hour: string, n: number) => new Date(Date.parse(`${hour}:00:00Z`) - n * 3_600_000).toISOString().slice(0, 13);

/**
 * Counts each stored event under its adapter and the hour the log stored it (the record's own time,
 * so a client's clock cannot skew it), dropping hours older than `HOURS_KEPT` before the newest.
 * Vigil's own access events are left out: they are requests, not evidence.
 */
export const sourceRatesProjection = instanceProjection<SourceRates>({
  name: 'source-rates',
  version: 1,
  initial: () => ({ latestHour: '', byAdapter: {}, systems: {} }),
  evolve(s, record) {
    const events = eventsCarried(record).filter((e) => e.source.adapter !== 'vigil');
    if (events.length === 0) return s;
    const hour = hourOf(record.at);
    if (hour > s.latestHour) {
      s.latestHour = hour;
      const oldest = hoursBefore(hour, HOURS_KEPT - 1);
      for (const buckets of Object.values(s.byAdapter)) for (const h of Object.keys(buckets)) if (h < oldest) delete buckets[h];
    }
    for (const e of events) {
      const adapter = s.byAdapter[e.source.adapter] !== undefined || Object.keys(s.byAdapter).length < SOURCES_KEPT ? e.source.adapter : 'other';
      const buckets = (s.byAdapter[adapter] ??= {});
      buckets[hour] = (buckets[hour] ?? 0) + 1;
      const system = s.systems[e.source.instance] !== undefined || Object.keys(s.systems).length < SYSTEMS_KEPT ? e.source.instance : 'other';
      const seen = (s.systems[system] ??= { lastAt: record.at, adapter: e.source.adapter, events: 0 });
      seen.events++;
      if (record.at >= seen.lastAt) { seen.lastAt = record.at; seen.adapter = e.source.adapter; }
    }
    return s;
  },
});

/** The last `hours` hour labels ending at `now` (oldest first), for charts. */
export function lastHours(now: Date, hours: number): string[] {
  const end = now.toISOString().slice(0, 13);
  return Array.from({ length: hours }, (_, i) => hoursBefore(end, hours - 1 - i));
}
