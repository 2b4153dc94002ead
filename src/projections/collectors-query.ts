import * as v from 'valibot';
import type { CollectorView, CollectorsState } from './collectors.js';

const Count = v.pipe(v.number(), v.integer());

/** A CollectorSummary as `GET /api/v1/collectors` answers it (published in docs/openapi.json). */
export const CollectorSummarySchema = v.strictObject({
  collectorId: v.string(),
  epoch: Count,
  keyFingerprint: v.string(),
  enrolledAt: v.string(),
  lastSequence: Count,
  lastAcceptedAt: v.nullable(v.string()),
  accepted: Count,
  rejected: Count,
  lastRejection: v.nullable(v.strictObject({ at: v.string(), reason: v.string() })),
});

/** What `GET /api/v1/collectors` shows of one collector (never a token hash). */
export interface CollectorSummary {
  readonly collectorId: string;
  readonly epoch: number;
  readonly keyFingerprint: string;
  readonly enrolledAt: string;
  readonly lastSequence: number;
  readonly lastAcceptedAt: string | null;
  readonly accepted: number;
  readonly rejected: number;
  readonly lastRejection: { at: string; reason: string } | null;
}

/** The collector of an id, or undefined. */
export function collectorOf(s: CollectorsState, collectorId: string): CollectorView | undefined {
  return s.collectors.get(collectorId);
}

/** Every enrolled collector, by id. */
export function listCollectors(s: CollectorsState): CollectorSummary[] {
  return [...s.collectors.values()]
    .sort((a, b) => (a.collectorId < b.collectorId ? -1 : a.collectorId > b.collectorId ? 1 : 0))
    .map((c) => ({
      collectorId: c.collectorId,
      epoch: c.epoch,
      keyFingerprint: c.keyFingerprint,
      enrolledAt: c.enrolledAt,
      lastSequence: c.lastSequence,
      lastAcceptedAt: c.lastAcceptedAt,
      accepted: c.accepted,
      rejected: c.rejected,
      lastRejection: c.lastRejection,
    }));
}
