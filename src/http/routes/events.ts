import * as v from 'valibot';
import type { Context } from 'hono';
import { decideIngestEvents, type IngestionResult } from '../../commands/ingest-events.js';
import type { Decision } from '../../commands/decision.js';
import type { AppDeps, AppEnv } from '../env.js';
import { CATEGORIES, IsoDateTime, NormalizedEventSchema } from '../../events/normalized-event.js';
import { listEvents, parseEventCursor } from '../../projections/evidence-query.js';
import { epochMillisOf } from '../../kernel/time.js';
import { batchOf, validateRecords } from '../batch.js';
import { readBatchBodyText } from '../body.js';
import { HttpError, parseOr400 } from '../errors.js';
import { QueryCursor, QueryLimit } from '../query.js';
import { executeAudited, ingestionAnswer, type AcceptedEcho } from '../request-context.js';
import type { Detections } from '../../commands/alerting/detection-step.js';
import { route, type Route } from '../route.js';
import { storedJson } from '../stored-json.js';
import { admitIngest } from '../admission.js';

/** Adapters whose events only Vigil itself writes (access events, signed collector evidence). */
export const RESERVED_ADAPTERS = ['vigil', 'collector'] as const;

/** A NormalizedEvent as a client may submit it: any adapter but the reserved ones, so evidence cannot be forged. */
export const SubmittedEventSchema = v.pipe(
  NormalizedEventSchema,
  v.check(
    (e) => !(RESERVED_ADAPTERS as readonly string[]).includes(e.source.adapter),
    `source.adapter: ${RESERVED_ADAPTERS.join(' and ')} are reserved for events Vigil records itself`,
  ),
);

/** Query of `GET /api/v1/events`. */
export const ListEventsQuery = v.strictObject({
  since: v.optional(IsoDateTime),
  until: v.optional(IsoDateTime),
  category: v.optional(v.picklist(CATEGORIES)),
  class: v.optional(v.pipe(v.string(), v.maxLength(256))),
  entityKey: v.optional(v.pipe(v.string(), v.maxLength(512))),
  adapter: v.optional(v.pipe(v.string(), v.maxLength(256))),
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
});

const ingestEventsRoute = route({
  method: 'post',
  path: '/api/v1/events',
  operationId: 'ingestEvents',
  summary: 'Ingest NormalizedEvents, all or nothing, idempotent by id',
  permission: 'ingest',
  audit: 'ingest_events',
  body: { batch: SubmittedEventSchema },
  middleware: (deps) => [
    admitIngest(deps.admission, deps.config.limits.bodyBytes, deps.config.limits.ingestBodySeconds * 1000),
  ],
  success: { status: 202, description: 'IngestionResult', schema: 'IngestionResult' },
  errors: [400, 409, 413, 415, 429],
  handle: async (c, { deps }) => {
    const staged = await stageEvents(c, deps);
    return ingestionAnswer(c, await staged.answer, staged.echo);
  },
});

/**
 * Reads, validates and stages a batch of events; answers what the answer needs once the batch is
 * durable. Its own function, so that nothing of the parsed batch stays reachable while the
 * commit is awaited but what the answer echoes (V8 would promote it to its old space meanwhile:
 * docs/benchmarks.md, 2026-12-01).
 */
async function stageEvents(
  c: Context<AppEnv>,
  deps: AppDeps,
): Promise<{ answer: Promise<{ result: IngestionResult; detections: Detections }>; echo?: AcceptedEcho }> {
  const body = await readBatchBodyText(c, deps.config.limits.bodyBytes);
  const batch = batchOf(body.value, deps.config.limits.recordsPerRequest);
  c.get('ingestTicket').records(batch.records.length);
  const events = validateRecords(SubmittedEventSchema, batch.records);
  // Every event is echoed (duplicates too), so the body's own array is the echo when validation
  // kept each record as parsed (src/kernel/json/schema-check.ts); a record valibot rebuilt is echoed as stored.
  const asSent = body.arrayText !== undefined && events.every((e, i) => e === batch.records[i]);
  const echo = asSent ? { json: body.arrayText!, count: events.length } : undefined;
  const answer = executeAudited(c, deps, (m) => withoutEchoed(decideIngestEvents(m, events), echo), 202);
  // Its rejection is the handler's to answer, a turn later.
  answer.catch(() => undefined);
  return echo ? { answer, echo } : { answer };
}

/** The decision, its result without the accepted events when the answer echoes them as sent. */
function withoutEchoed(d: Decision<IngestionResult>, echo: AcceptedEcho | undefined): Decision<IngestionResult> {
  return d.ok && echo ? { ...d, result: { ...d.result, accepted: [] } } : d;
}

const listEventsRoute = route({
  method: 'get',
  path: '/api/v1/events',
  operationId: 'listEvents',
  summary: 'Events newest first, from the evidence index',
  permission: 'events:read',
  audit: 'list_events',
  query: ListEventsQuery,
  success: {
    status: 200,
    description: '`{events, nextCursor}`',
    schema: v.strictObject({ events: v.array(NormalizedEventSchema), nextCursor: v.nullable(v.string()) }),
  },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(ListEventsQuery, c.req.query(), 'query');
    const after = q.cursor !== undefined ? parseEventCursor(q.cursor) : undefined;
    if (q.cursor !== undefined && !after)
      throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    await deps.readYourWrites();
    const page = listEvents(
      deps.reads,
      {
        ...(q.since ? { sinceMs: epochMillisOf(q.since)! } : {}),
        ...(q.until ? { untilMs: epochMillisOf(q.until)! } : {}),
        ...(q.category ? { category: q.category } : {}),
        ...(q.class ? { class: q.class } : {}),
        ...(q.entityKey ? { entityKey: q.entityKey } : {}),
        ...(q.adapter ? { adapter: q.adapter } : {}),
      },
      Math.min(q.limit ?? 100, deps.config.limits.pageSize),
      after,
    );
    return storedJson(c, page);
  },
});

/**
 * `POST /api/v1/events` (ingestor) and `GET /api/v1/events` (viewer); the list sees every write acknowledged before the
 * request.
 */
export const eventRoutes: readonly Route[] = [ingestEventsRoute, listEventsRoute];
