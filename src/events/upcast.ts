import type { EventData, InstanceEventType, LegacyEventType } from './union.js';

/** The type each legacy stored type is read as: one table for the upcast and for the folds that name the successor. */
export const LEGACY_READ_AS = { DetectionHits: 'DetectionHitsRecorded' } as const satisfies {
  readonly [K in LegacyEventType]: InstanceEventType;
};

/**
 * Reads the data of a legacy `DetectionHits` record (`{r, n?, e, t, v}` per hit) as
 * `DetectionHitsRecorded` data: the same hits, their fields spelled out.
 */
export function hitsRecordedFromLegacy(data: EventData<'DetectionHits'>): EventData<'DetectionHitsRecorded'> {
  return {
    hits: data.hits.map((h) => ({
      ruleId: h.r,
      ...(h.n !== undefined ? { ruleName: h.n } : {}),
      eventId: h.e,
      timeMs: h.t,
      values: h.v,
    })),
  };
}
