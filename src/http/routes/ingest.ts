import * as v from 'valibot';
import { decideIngestRaw } from '../../commands/ingest-raw.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { NORMALIZERS, logTypeProblem } from '../../normalizers/registry.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from '../../normalizers/types.js';
import { batchOf } from '../batch.js';
import { readBatchBody } from '../body.js';
import { HttpError, parseOr400 } from '../errors.js';
import { executeAudited, ingestionAnswer } from '../request-context.js';
import { route, type Route } from '../route.js';
import { admitIngest } from '../admission.js';

/**
 * Path of `POST /api/v1/ingest/{normalizer}`: the built-in normalizers (the handler names them when another is asked
 * for).
 */
export const IngestParams = v.object({ normalizer: v.picklist([...NORMALIZERS.keys()]) });

/** One raw record as a normalizer takes it (each normalizer checks its own fields). */
export const RawRecord = v.record(v.string(), v.unknown());

/** Query of `POST /api/v1/ingest/{normalizer}`. */
export const IngestQuery = v.strictObject({
  logType: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  meshnet: v.optional(
    v.pipe(v.string(), v.minLength(1), v.maxLength(253), v.regex(/^[\w.@-]+$/, 'expected a tailnet name')),
  ),
});

/** Runs a normalizer over every record; one 400 names every refused record by index. */
function normalizeAll(
  normalizer: Normalizer,
  ctx: NormalizeContext,
  records: readonly unknown[],
): Array<{ record: unknown; events: NormalizedEvent[] }> {
  const out: Array<{ record: unknown; events: NormalizedEvent[] }> = [];
  const issues: string[] = [];
  for (let i = 0; i < records.length; i++) {
    let r: NormalizeResult;
    try {
      r = normalizer.normalize(records[i], ctx);
    } catch {
      // A normalizer must not throw; if one does, the record is refused rather than the server failing.
      r = { ok: false, error: 'record could not be normalized' };
    }
    if (r.ok) out.push({ record: records[i], events: r.events });
    else if (issues.length < 200) issues.push(`records[${i}]: ${r.error}`);
  }
  if (issues.length > 0) throw new HttpError(400, 'invalid records: the batch was not accepted', issues);
  return out;
}

/**
 * An OTLP/JSON ExportLogsServiceRequest sent as the whole body, as the OpenTelemetry SDK exporters
 * send it, is the one record of the batch.
 */
function exportRequestAsBatch(normalizer: string, body: unknown): unknown {
  const isExport =
    normalizer === 'opentelemetry-log' &&
    body !== null &&
    typeof body === 'object' &&
    !Array.isArray(body) &&
    'resourceLogs' in body &&
    !('records' in body);
  return isExport ? [body] : body;
}

const ingestRawRoute = route({
  method: 'post',
  path: '/api/v1/ingest/{normalizer}',
  operationId: 'ingestRaw',
  summary: `Ingest raw records through a built-in normalizer (${[...NORMALIZERS.keys()].join(', ')}); all or nothing`,
  permission: 'ingest',
  audit: 'ingest_raw',
  params: IngestParams,
  query: IngestQuery,
  body: { batch: RawRecord },
  middleware: (deps) => [
    admitIngest(deps.admission, deps.config.limits.bodyBytes, deps.config.limits.ingestBodySeconds * 1000),
  ],
  success: { status: 202, description: 'IngestionResult', schema: 'IngestionResult' },
  errors: [400, 413, 415, 429],
  handle: async (c, { deps }) => {
    const name = c.req.param('normalizer');
    const normalizer = NORMALIZERS.get(name);
    if (!normalizer)
      throw new HttpError(400, 'unknown normalizer', [
        `normalizer: ${JSON.stringify(name.slice(0, 64))} is not one of ${[...NORMALIZERS.keys()].join(', ')}`,
      ]);
    const q = parseOr400(IngestQuery, c.req.query(), 'query');
    const problem = logTypeProblem(normalizer, q.logType);
    if (problem) throw new HttpError(400, 'invalid query', [problem]);
    if (q.meshnet !== undefined && name !== 'mesh-vpn-logs')
      throw new HttpError(400, 'invalid query', [`meshnet: only mesh-vpn-logs takes a meshnet`]);
    const batch = batchOf(
      exportRequestAsBatch(name, await readBatchBody(c, deps.config.limits.bodyBytes)),
      deps.config.limits.recordsPerRequest,
    );
    c.get('ingestTicket').records(batch.records.length);
    const ctx: NormalizeContext = {
      ingestedAt: deps.now().toISOString(),
      ...(q.logType !== undefined ? { logType: q.logType } : {}),
      ...(q.meshnet !== undefined ? { meshnet: q.meshnet } : {}),
      ...(batch.context !== undefined ? { context: batch.context } : {}),
    };
    let normalized: ReturnType<typeof normalizeAll>;
    try {
      normalized = normalizeAll(normalizer, ctx, batch.records);
    } catch (err) {
      deps.metrics?.ingested.inc(
        { route: '/api/v1/ingest/{normalizer}', normalizer: name, outcome: 'rejected' },
        batch.records.length,
      );
      throw err;
    }
    const cmd = {
      normalizer: name,
      normalized,
      ...(q.logType !== undefined ? { logType: q.logType } : {}),
      ...(q.meshnet !== undefined ? { meshnet: q.meshnet } : {}),
    };
    const outcome = await executeAudited(c, deps, (m) => decideIngestRaw(m, cmd), 202);
    deps.metrics?.ingested.inc(
      { route: '/api/v1/ingest/{normalizer}', normalizer: name, outcome: 'accepted' },
      outcome.result.accepted.length,
    );
    return ingestionAnswer(c, outcome);
  },
});

/** `POST /api/v1/ingest/{normalizer}` (ingestor): raw records through a built-in normalizer. */
export const ingestRoutes: readonly Route[] = [ingestRawRoute];
