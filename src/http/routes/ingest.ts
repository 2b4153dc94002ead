import * as v from 'valibot';
import { decideIngestRaw } from '../../commands/ingest-raw.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { NORMALIZERS, logTypeProblem } from '../../normalizers/registry.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from '../../normalizers/types.js';
import { readRawBatch, type RawBatch } from '../raw-batch.js';
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
  /** `true`: the batch is accepted whole or refused whole (400 naming every refused record). */
  atomic: v.optional(v.picklist(['true', 'false'], 'expected true or false')),
});

/** A record of a raw batch that was not accepted: its position in the batch, its line, and why (docs/api.md). */
export interface RefusedRecord {
  /** The record's position in the batch, from 0 (the array index; for a body of lines, blank lines not counted). */
  readonly index: number;
  /** The line (from 1) the record was on, when the body was read line by line. */
  readonly line?: number;
  readonly issues: readonly string[];
}

/** What a batch became: each accepted record with its events, and each refused record. */
interface Normalized {
  readonly normalized: Array<{ record: unknown; events: NormalizedEvent[] }>;
  readonly refused: RefusedRecord[];
}

/** Runs a normalizer over every record that could be read; a refused record is listed with why. */
function normalizeAll(normalizer: Normalizer, ctx: NormalizeContext, batch: RawBatch): Normalized {
  const normalized: Normalized['normalized'] = [];
  const refused: RefusedRecord[] = [];
  for (let i = 0; i < batch.records.length; i++) {
    const record = batch.records[i];
    let r: NormalizeResult;
    const unreadable = batch.unreadable.get(i);
    if (unreadable !== undefined) r = { ok: false, error: unreadable };
    else {
      try {
        r = normalizer.normalize(record, ctx);
      } catch {
        // A normalizer must not throw; if one does, the record is refused rather than the server failing.
        r = { ok: false, error: 'record could not be normalized' };
      }
    }
    if (r.ok) normalized.push({ record, events: r.events });
    else {
      const line = batch.lines?.[i];
      refused.push({ index: i, ...(line === undefined ? {} : { line }), issues: [r.error] });
    }
  }
  return { normalized, refused };
}

/** The 400 of a batch not accepted: every refused record named (at most 200), as `records[3]: ...`. */
function refusedBatch(refused: readonly RefusedRecord[], why: string): HttpError {
  const issues = refused.slice(0, 200).map((r) => `records[${r.index}]: ${r.issues.join('; ')}`);
  return new HttpError(400, `invalid records: ${why}`, issues);
}

const ingestRawRoute = route({
  method: 'post',
  path: '/api/v1/ingest/{normalizer}',
  operationId: 'ingestRaw',
  summary:
    `Ingest raw records through a built-in normalizer (${[...NORMALIZERS.keys()].join(', ')}): the good records ` +
    'of a batch are accepted, the others listed in refused (atomic=true: all or nothing)',
  permission: 'ingest',
  audit: 'ingest_raw',
  params: IngestParams,
  query: IngestQuery,
  body: { batch: RawRecord, text: 'syslog-rfc5424 only: one RFC 5424 message per line, or octet-counted (RFC 6587)' },
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
    const batch = await readRawBatch(c, name, deps.config.limits);
    c.get('ingestTicket').records(batch.records.length);
    const ctx: NormalizeContext = {
      ingestedAt: deps.now().toISOString(),
      ...(q.logType !== undefined ? { logType: q.logType } : {}),
      ...(q.meshnet !== undefined ? { meshnet: q.meshnet } : {}),
      ...(batch.context !== undefined ? { context: batch.context } : {}),
    };
    const { normalized, refused } = normalizeAll(normalizer, ctx, batch);
    const count = (outcome: 'accepted' | 'rejected', n: number) =>
      deps.metrics?.ingested.inc({ route: '/api/v1/ingest/{normalizer}', normalizer: name, outcome }, n);
    count('rejected', refused.length);
    if (normalized.length === 0) throw refusedBatch(refused, 'no record of the batch was accepted');
    if (refused.length > 0 && q.atomic === 'true') {
      count('rejected', normalized.length);
      throw refusedBatch(refused, 'the batch was not accepted (atomic=true)');
    }
    const cmd = {
      normalizer: name,
      normalized,
      ...(q.logType !== undefined ? { logType: q.logType } : {}),
      ...(q.meshnet !== undefined ? { meshnet: q.meshnet } : {}),
    };
    const outcome = await executeAudited(c, deps, (m) => decideIngestRaw(m, cmd), 202);
    count('accepted', outcome.result.accepted.length);
    return ingestionAnswer(c, outcome, undefined, refused);
  },
});

/** `POST /api/v1/ingest/{normalizer}` (ingestor): raw records through a built-in normalizer. */
export const ingestRoutes: readonly Route[] = [ingestRawRoute];
