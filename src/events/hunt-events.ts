import * as v from 'valibot';

/** Whether a hunt answered events or rows (an aggregation). */
export const HUNT_OUTPUTS = ['events', 'rows'] as const;

/**
 * `HuntSearched`: one search of stored evidence (`POST /api/v1/search`, `vigil search`, the console's hunt page), its
 * audit record: who asked (the record's actor, and `principal` here), the query as typed, the time range, what was
 * answered, and the log records the answer cited. The seq of this record is the search's id, so its proof
 * (`GET /api/v1/search/{id}/proof`) reads the cited records from here, for as long as the log keeps it.
 */
export const HuntSearchedSchema = v.strictObject({
  principal: v.nullable(v.string()),
  query: v.string(),
  since: v.string(),
  until: v.string(),
  output: v.picklist(HUNT_OUTPUTS),
  /** Events or rows answered. */
  rows: v.number(),
  scanned: v.number(),
  complete: v.boolean(),
  tookMs: v.number(),
  /** The seqs of the records that carried the answered events, ascending, each once (none for rows). */
  cited: v.array(v.number()),
  /** Set when the search continued an earlier page. */
  cursor: v.optional(v.string()),
});

/** The hunting events of the instance, by stored type name. */
export const HUNT_EVENTS = { HuntSearched: HuntSearchedSchema } as const;
