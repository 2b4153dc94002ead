import type * as v from 'valibot';
import { asInstanceRecord } from '../../events/read.js';
import type { CarriedRecordSchema } from '../../events/retention-events.js';
import { eventsOfRecord } from '../../events/record-types.js';
import type { LogRecord } from '../../kernel/record.js';
import { kindOf, type RetentionDays } from './kinds.js';

/** A record carried forward: the original as stored, with the hash of its bytes. */
export type CarriedRecord = v.InferOutput<typeof CarriedRecordSchema>;

/** One record of an expiring segment, with the hash of its stored bytes. */
export interface SegmentRecord {
  readonly record: LogRecord;
  readonly hash: string;
}

const DAY_MS = 86_400_000;

/** The record's time minus `days`, as ISO 8601 (the time before which a record of that kind has expired). */
export function expiredBefore(now: string, days: number): string {
  return new Date(Date.parse(now) - days * DAY_MS).toISOString();
}

/** Whether a record of this type and time is still within its kind's retention at `now`. */
export function stillKept(type: string, at: string, days: RetentionDays, now: string): boolean {
  const kind = kindOf(type);
  if (kind === 'kept') return true;
  const d = days[kind];
  return d === null || Date.parse(at) + d * DAY_MS > Date.parse(now);
}

/** The seq ranges that expire, in order: whole segments from `first` whose newest record is older than `before`. */
export function expiringSegments(
  first: number,
  head: number,
  segmentRecords: number,
  atOf: (seq: number) => string | undefined,
  before: string,
  max: number,
): Array<{ from: number; to: number }> {
  const out: Array<{ from: number; to: number }> = [];
  for (let from = first; out.length < max && from + segmentRecords - 1 <= head; from += segmentRecords) {
    const to = from + segmentRecords - 1;
    const at = atOf(to);
    if (at === undefined || !(at < before)) break;
    out.push({ from, to });
  }
  return out;
}

/**
 * What an expiry needs to know of a segment besides its archive, gathered where the segment is
 * read (the archive worker), so the writer's thread never decodes it. Each record is carried
 * forward while its kind's policy keeps it (and a collector's latest accepted submission always,
 * so its sequence survives), else dropped; a `RecordsCarriedForward` record is never carried
 * itself: its records are judged one by one. Only whether a submission is still its collector's
 * latest is left to the cut, where the writer's models know it (`fateOfSummary`).
 */
export interface SegmentSummary {
  /** The hash of the segment's last record (the cut links to it). */
  readonly lastHash: string;
  /**
   * In the segment's order, the records their kind's policy still keeps and the submissions past
   * theirs (`eventIds` set): those are carried only while the latest of their collector.
   */
  readonly candidates: ReadonlyArray<{ readonly record: CarriedRecord; readonly eventIds?: readonly string[] }>;
  /** Records dropped with the segment, with the ids of the events they carried. */
  readonly dropped: ReadonlyArray<{ readonly seq: number; readonly eventIds: readonly string[] }>;
}

/** A segment's records, gathered into a SegmentSummary as they are read. */
export function summarizeSegment(
  days: RetentionDays,
  now: string,
): { add(r: SegmentRecord): void; summary(): SegmentSummary } {
  let lastHash = '';
  const candidates: Array<{ record: CarriedRecord; eventIds?: string[] }> = [];
  const dropped: Array<{ seq: number; eventIds: string[] }> = [];
  const ids = (r: LogRecord) => eventsOfRecord(r).map((e) => e.id);
  const judge = (r: LogRecord, hash: string) => {
    if (stillKept(r.type, r.at, days, now)) candidates.push({ record: carriedOf(r, hash) });
    else if (r.type === 'CollectorSubmissionAccepted')
      candidates.push({ record: carriedOf(r, hash), eventIds: ids(r) });
    else dropped.push({ seq: r.seq, eventIds: ids(r) });
  };
  return {
    add({ record, hash }) {
      lastHash = hash;
      const held = carriedBy(record);
      if (!held) judge(record, hash);
      else for (const c of held) judge(asRecord(c), c.hash);
    },
    summary: () => ({ lastHash, candidates, dropped }),
  };
}

/**
 * What becomes of a summarized segment's records, now that `latestSubmission` can be asked: carried forward, or dropped
 * (by seq, with their event ids).
 */
export function fateOfSummary(
  s: SegmentSummary,
  latestSubmission: (r: LogRecord) => boolean,
): { carried: CarriedRecord[]; dropped: Array<{ seq: number; eventIds: readonly string[] }> } {
  const carried: CarriedRecord[] = [];
  const dropped = [...s.dropped];
  for (const { record, eventIds } of s.candidates) {
    if (eventIds === undefined || latestSubmission(asRecord(record))) carried.push(record);
    else dropped.push({ seq: record.seq, eventIds });
  }
  return { carried, dropped };
}

function carriedOf(r: LogRecord, hash: string): CarriedRecord {
  return {
    seq: r.seq,
    hash,
    at: r.at,
    type: r.type,
    ...(r.actor ? { actor: r.actor } : {}),
    data: r.data,
    prev: r.prev,
  };
}

/** The records a `RecordsCarriedForward` record carries forward; `undefined` for any other record. */
export function carriedBy(r: LogRecord): readonly CarriedRecord[] | undefined {
  const known = asInstanceRecord(r);
  return known?.type === 'RecordsCarriedForward' ? known.data.records : undefined;
}

/** A carried record as the log record it was (projections fold it exactly as the original). */
export function asRecord(c: CarriedRecord): LogRecord {
  return { seq: c.seq, at: c.at, type: c.type, ...(c.actor ? { actor: c.actor } : {}), data: c.data, prev: c.prev };
}
