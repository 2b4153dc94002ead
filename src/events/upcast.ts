import type { EventData } from './union.js';

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
