import {
  compareCells,
  type Cell,
  type CompiledHunt,
  type HuntIndexTerms,
  type HuntOrder,
} from '../../detection/hunt/index.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { eventOffsets } from '../../log/evidence-fields.js';
import { decodeRecord } from '../../log/record.js';
import { EVIDENCE_DBS, bucketOf, forEachPosting, type EventDimension } from '../../projections/evidence.js';
import {
  RECENT_RECORDS,
  eventReader,
  recentRecords,
  secondsOf,
  storedEventsOf,
  type EventCursor,
} from '../../projections/evidence-query.js';
import type { ReadModels } from '../../projections/runtime.js';

/** One search as the scan runs it: the range, the page, where the last page stopped, and its bounds. */
export interface HuntJob {
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Events (or, after a field sort, the top events) a page answers. */
  readonly limit: number;
  /** Where the previous page stopped (events answers in time order only). */
  readonly after?: EventCursor;
  /** Events read (matching or not) before the scan stops with `complete: false` (`limits.searchEvents`). */
  readonly maxEvents: number;
  /** When (epoch ms) the scan stops with `complete: false` (`limits.searchSeconds` after it started). */
  readonly deadline: number;
}

/** A cell of a rows answer. */
export type HuntCell = string | number | null;

/** What every answer says of the scan. */
interface ScanFacts {
  /** Events read: those the index walk handed over, matching or not. */
  readonly scanned: number;
  /** False when a bound stopped the scan before the range was read whole. */
  readonly complete: boolean;
}

/** Matching events, newest first unless the query sorts otherwise, with the seq of the record of each. */
export interface HuntEventsAnswer extends ScanFacts {
  readonly output: 'events';
  readonly events: Record<string, unknown>[];
  readonly seqs: number[];
  /** Where the next page starts; null when there is none. */
  readonly next: EventCursor | null;
}

/** An aggregation's table. */
export interface HuntRowsAnswer extends ScanFacts {
  readonly output: 'rows';
  readonly columns: string[];
  readonly rows: HuntCell[][];
  /** The aggregation stopped adding groups at its bound. */
  readonly truncated: boolean;
  /** When a bound stopped the scan: the oldest time it had read down to (epoch ms); the rows count newer events. */
  readonly coveredSince: number | null;
}

/** A search's answer. */
export type HuntAnswer = HuntEventsAnswer | HuntRowsAnswer;

/** The stores a scan reads: the read side's evidence indexes and the log's records (and their bytes, when at hand). */
export type ScanModels = Pick<ReadModels, 'db' | 'record'> & {
  /** A committed record's stored bytes: a page read through a field index decodes only the events it needs. */
  readonly bytes?: (seq: number) => Uint8Array | undefined;
};

/** How often (in events) a scan looks at the clock. */
const CLOCK_EVERY = 256;

/**
 * The index a scan walks: the first of entity key, class, category and adapter that the query pins to one value (the
 * query's own predicate is checked on every event anyway); none: the time index, every event of the range.
 */
export function indexOf(terms: HuntIndexTerms): [EventDimension, string] | undefined {
  const one = (values: string[] | undefined) => (values?.length === 1 ? values[0] : undefined);
  const picks: [EventDimension, string | undefined][] = [
    ['entity', one(terms.entityKey)],
    ['class', one(terms.class)],
    ['category', one(terms.category)],
    ['adapter', one(terms.adapter)],
  ];
  const pick = picks.find(([, value]) => value !== undefined);
  return pick ? [pick[0], pick[1]!] : undefined;
}

/** Runs one search over stored evidence (docs/hunting.md "How a hunt runs"). */
export function runHunt(models: ScanModels, hunt: CompiledHunt, job: HuntJob, clock = Date.now): HuntAnswer {
  if (hunt.output === 'rows') return rowsOf(models, hunt, job, clock);
  if ('needsAll' in hunt.order) return sortedEvents(models, hunt, job, clock);
  return pageOfEvents(models, hunt, job, clock);
}

/** Whether a bound stops the scan after `scanned` events. */
function bounded(job: HuntJob, scanned: number, clock: () => number): boolean {
  return scanned >= job.maxEvents || (scanned % CLOCK_EVERY === 0 && clock() >= job.deadline);
}

/** A page of matching events in time order, from where the last page stopped. */
function pageOfEvents(models: ScanModels, hunt: CompiledHunt, job: HuntJob, clock: () => number): HuntEventsAnswer {
  const reverse = hunt.order.descending;
  const { after } = job;
  const limit = Math.min(job.limit, hunt.head ?? Infinity);
  const hi = reverse && after ? Math.min(after[0], job.untilMs) : job.untilMs;
  const lo = !reverse && after ? Math.max(after[0], job.sinceMs) : job.sinceMs;
  const dim = indexOf(hunt.indexTerms);
  const db = models.db<Uint8Array>(dim ? EVIDENCE_DBS.byDim : EVIDENCE_DBS.byTime);
  // Through a field index, a page takes a few events of each record: those are decoded alone.
  const read = dim && models.bytes ? sparseReader(models as Required<ScanModels>) : eventReader(models);
  const events: Record<string, unknown>[] = [];
  const seqs: number[] = [];
  let scanned = 0;
  const room = () => Math.max(1, job.maxEvents - scanned);
  const answer = (next: EventCursor | null, complete: boolean): HuntEventsAnswer => ({
    output: 'events',
    events,
    seqs,
    // A `head` ends the answer with its page.
    next: hunt.head !== undefined ? null : next,
    scanned,
    complete,
  });
  for (const second of secondsOf(db, dim ?? [], { lo, hi, reverse, after, room })) {
    for (const [place, event] of read(second)) {
      scanned++;
      if (event && hunt.matches(event)) {
        events.push(hunt.project(event));
        seqs.push(place[1]);
        if (events.length >= limit) return answer(place, true);
      }
      if (bounded(job, scanned, clock)) return answer(place, false);
    }
  }
  return answer(null, true);
}

/** Records whose bytes and event offsets a sparse reader keeps (a page's places come a second at a time). */
const SPARSE_RECORDS = 16;

/**
 * Reads the events of a second's places decoding each alone (evidence-fields.ts `eventOffsets`): a page through a
 * field index needs a few events of each of many records, and decoding a record of thousands whole for each costs
 * more than the rest of the search. A record whose events cannot be located so is decoded whole.
 */
function sparseReader(
  models: Required<ScanModels>,
): (places: readonly EventCursor[]) => Generator<[EventCursor, NormalizedEvent | undefined]> {
  const held = recentRecords(SPARSE_RECORDS, (seq) => {
    const bytes = models.bytes(seq);
    const offsets = bytes ? eventOffsets(bytes) : undefined;
    return bytes && offsets ? { bytes, offsets } : storedEventsOf(models, seq);
  });
  return function* (places) {
    for (const place of places) {
      const r = held(place[1]);
      const i = place[2];
      if (Array.isArray(r)) yield [place, (r as readonly NormalizedEvent[])[i]];
      else {
        const { bytes, offsets } = r as { bytes: Uint8Array; offsets: Uint32Array };
        const event =
          i + 1 < offsets.length ? decodeRecord<never>(bytes.subarray(offsets[i], offsets[i + 1])) : undefined;
        yield [place, event as NormalizedEvent | undefined];
      }
    }
  };
}

/**
 * Calls `visit` with every event of the range, newest second first (within a second in no particular order), until
 * it answers false.
 */
function forEachInRange(
  models: ScanModels,
  dim: [EventDimension, string] | undefined,
  range: { readonly lo: number; readonly hi: number },
  visit: (e: NormalizedEvent, seq: number) => boolean,
): void {
  const db = models.db<Uint8Array>(dim ? EVIDENCE_DBS.byDim : EVIDENCE_DBS.byTime);
  const prefix = dim ?? [];
  const n = prefix.length;
  let seq = 0;
  let events: readonly NormalizedEvent[] = [];
  let going = true;
  const take = (t: number, index: number) => {
    if (!going || t < range.lo || t > range.hi) return;
    const e = events[index];
    if (e) going = visit(e, seq);
  };
  const eventsOf = recentRecords(RECENT_RECORDS, (s) => storedEventsOf(models, s));
  for (const { key, value } of db.getRange({
    start: [...prefix, bucketOf(range.hi) + 1],
    end: [...prefix, bucketOf(range.lo)],
    reverse: true,
  })) {
    seq = (key as Array<string | number>)[n + 1] as number;
    events = eventsOf(seq);
    forEachPosting(value, take);
    if (!going) return;
  }
}

/** An aggregation over every matching event of the range (or of as much of it as the bounds let the scan read). */
function rowsOf(models: ScanModels, hunt: CompiledHunt, job: HuntJob, clock: () => number): HuntRowsAnswer {
  const agg = hunt.aggregator({ sinceMs: job.sinceMs, untilMs: job.untilMs });
  let scanned = 0;
  let stoppedAt: number | null = null;
  forEachInRange(models, indexOf(hunt.indexTerms), { lo: job.sinceMs, hi: job.untilMs }, (e) => {
    scanned++;
    if (hunt.matches(e)) agg.add(e);
    if (!bounded(job, scanned, clock)) return true;
    stoppedAt = Date.parse(e.time);
    return false;
  });
  const { columns, rows } = agg.finish();
  return {
    output: 'rows',
    columns,
    rows,
    truncated: agg.truncated,
    coveredSince: stoppedAt,
    scanned,
    complete: stoppedAt === null,
  };
}

/** The top `limit` matching events by a field other than time: every match of the range is looked at. */
function sortedEvents(models: ScanModels, hunt: CompiledHunt, job: HuntJob, clock: () => number): HuntEventsAnswer {
  const order = hunt.order as Extract<HuntOrder, { needsAll: true }>;
  const limit = Math.min(job.limit, hunt.head ?? Infinity);
  const sign = order.descending ? -1 : 1;
  // Events without the field come last either way; ties newest first.
  const compare = (a: Kept, b: Kept) =>
    (a.key === null || b.key === null
      ? Number(a.key === null) - Number(b.key === null)
      : sign * compareCells(a.key, b.key)) || b.time - a.time;
  let kept: Kept[] = [];
  let scanned = 0;
  let complete = true;
  forEachInRange(models, indexOf(hunt.indexTerms), { lo: job.sinceMs, hi: job.untilMs }, (e, seq) => {
    scanned++;
    if (hunt.matches(e)) {
      kept.push({ event: e, seq, key: order.key(e), time: Date.parse(e.time) });
      if (kept.length >= 2 * limit + 64) kept = kept.sort(compare).slice(0, limit);
    }
    if (!bounded(job, scanned, clock)) return true;
    complete = false;
    return false;
  });
  kept = kept.sort(compare).slice(0, limit);
  return {
    output: 'events',
    events: kept.map((k) => hunt.project(k.event)),
    seqs: kept.map((k) => k.seq),
    next: null,
    scanned,
    complete,
  };
}

/** A match a field sort keeps for now. */
interface Kept {
  readonly event: NormalizedEvent;
  readonly seq: number;
  readonly key: Cell;
  readonly time: number;
}
