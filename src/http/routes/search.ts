import * as v from 'valibot';
import { accept } from '../../commands/decision.js';
import { parseHunt, printHunt } from '../../detection/hunt/index.js';
import type { HuntSearchedSchema } from '../../events/hunt-events.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { parseCheckpoint } from '../../log/checkpoint.js';
import { parseNote } from '../../log/signed-note.js';
import { encodeCursor } from '../../projections/cursor.js';
import { parseEventCursor } from '../../projections/evidence-query.js';
import { epochMillisOf } from '../../kernel/time.js';
import type { HuntAnswer } from '../../services/hunt/scan.js';
import { SearchesBusy, type Searcher } from '../../services/hunt/searches.js';
import { readJsonBody } from '../body.js';
import type { AppDeps } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { executeAudited } from '../request-context.js';
import { route, type Route } from '../route.js';

/** The longest query text a search takes. */
export const MAX_QUERY_BYTES = 16 * 1024;
/** The range a search covers when it names none: the last day. */
const DEFAULT_RANGE_MS = 86_400_000;

/** Body of `POST /api/v1/search`. */
export const SearchBody = v.strictObject({
  query: v.pipe(v.string(), v.maxLength(MAX_QUERY_BYTES)),
  since: v.optional(IsoDateTime),
  until: v.optional(IsoDateTime),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 100),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

const Count = v.pipe(v.number(), v.integer(), v.minValue(0));
const Cell = v.union([v.string(), v.number(), v.null()]);

/** The answer of `POST /api/v1/search`. */
const SearchAnswer = v.strictObject({
  id: v.pipe(v.string(), v.description('the seq of the search audit record; `GET /api/v1/search/{id}/proof`')),
  query: v.pipe(v.string(), v.description('the query as Vigil read it (canonical form)')),
  since: v.string(),
  until: v.string(),
  output: v.picklist(['events', 'rows']),
  events: v.optional(v.array(v.record(v.string(), v.unknown()))),
  columns: v.optional(v.array(v.string())),
  rows: v.optional(v.array(v.array(Cell))),
  truncated: v.optional(v.boolean()),
  coveredSince: v.optional(v.nullable(v.string())),
  nextCursor: v.nullable(v.string()),
  complete: v.boolean(),
  scanned: Count,
  took: v.pipe(v.number(), v.description('milliseconds')),
});

/** The search's range in epoch ms: `until` defaults to now, `since` to a day before `until`. */
function rangeOf(body: v.InferOutput<typeof SearchBody>, now: Date): { sinceMs: number; untilMs: number } {
  const untilMs = body.until !== undefined ? epochMillisOf(body.until)! : now.getTime();
  const sinceMs = body.since !== undefined ? epochMillisOf(body.since)! : untilMs - DEFAULT_RANGE_MS;
  if (sinceMs > untilMs) throw new HttpError(400, 'since must not be after until');
  return { sinceMs, untilMs };
}

function searcher(deps: AppDeps): Searcher {
  if (!deps.search) throw new HttpError(404, 'this service runs no searches here');
  return deps.search;
}

/** The seqs an answer cites, ascending, each once. */
const citedOf = (a: HuntAnswer): number[] => (a.output === 'events' ? [...new Set(a.seqs)].sort((x, y) => x - y) : []);

const searchRoute = route({
  method: 'post',
  path: '/api/v1/search',
  operationId: 'searchEvents',
  summary:
    'Hunt: a KQL query with pipes over every stored event of a time range (docs/hunting.md); events or rows, ' +
    'each search an audit record',
  permission: 'events:read',
  audit: 'search_events',
  body: { json: SearchBody },
  success: { status: 200, description: 'events (a page) or rows (an aggregation)', schema: SearchAnswer },
  errors: [400, 404, 413, 415, 429],
  handle: async (c, { deps }) => {
    const s = searcher(deps);
    const body = parseOr400(SearchBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const parsed = parseHunt(body.query);
    if (!parsed.ok) {
      const { position, expected, message } = parsed.error;
      throw new HttpError(400, `query: ${message}`, undefined, { position, expected: [...expected] });
    }
    const after = body.cursor !== undefined ? parseEventCursor(body.cursor) : undefined;
    if (body.cursor !== undefined && !after) throw new HttpError(400, 'cursor: not a cursor this search answered');
    const { sinceMs, untilMs } = rangeOf(body, deps.now());
    const limits = deps.config.limits;
    await deps.readYourWrites();
    const started = performance.now();
    let answer: HuntAnswer;
    try {
      answer = await s.search(body.query, {
        sinceMs,
        untilMs,
        limit: body.limit,
        ...(after ? { after } : {}),
        maxEvents: limits.searchEvents,
        deadline: Date.now() + limits.searchSeconds * 1000,
      });
    } catch (err) {
      if (err instanceof SearchesBusy) throw new HttpError(429, err.message, undefined, { retryAfterSeconds: 5 });
      throw err;
    }
    const took = Math.round(performance.now() - started);
    const [since, until] = [new Date(sinceMs).toISOString(), new Date(untilMs).toISOString()];
    const principal = c.get('principal');
    const data: v.InferOutput<typeof HuntSearchedSchema> = {
      principal: principal?.id ?? null,
      query: body.query,
      since,
      until,
      output: answer.output,
      rows: answer.output === 'events' ? answer.events.length : answer.rows.length,
      scanned: answer.scanned,
      complete: answer.complete,
      tookMs: took,
      cited: citedOf(answer),
      ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
    };
    const { principal: _p, tookMs: _t, cited: _c, cursor: _k, ...asked } = data;
    c.set('auditSearch', asked);
    const { records } = await executeAudited(c, deps, () => accept([{ type: 'HuntSearched', data }], null), 200);
    const id = String(records.find((r) => r.type === 'HuntSearched')!.seq);
    const shown =
      answer.output === 'events'
        ? { events: answer.events, nextCursor: answer.next ? encodeCursor(answer.next) : null }
        : {
            columns: answer.columns,
            rows: answer.rows,
            truncated: answer.truncated,
            coveredSince: answer.coveredSince === null ? null : new Date(answer.coveredSince).toISOString(),
            nextCursor: null,
          };
    return c.json({
      id,
      query: printHunt(parsed.query),
      since,
      until,
      output: answer.output,
      ...shown,
      complete: answer.complete,
      scanned: answer.scanned,
      took,
    });
  },
});

const ProofParams = v.object({ id: v.pipe(v.string(), v.regex(/^[1-9]\d{0,14}$/, 'expected a search id')) });

/** One cited record with its inclusion proof (`vigil log verify-inclusion RECORD CHECKPOINT --proof`). */
const ProvedRecord = v.strictObject({
  seq: Count,
  record: v.pipe(v.string(), v.description('the record as `vigil log export --raw` writes it (one line)')),
  leaf_index: Count,
  leaf_hash: v.string(),
  inclusion_path: v.array(v.string()),
});

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');

const proofRoute = route({
  method: 'get',
  path: '/api/v1/search/{id}/proof',
  operationId: 'readSearchProof',
  summary:
    "The records a search's answer cited, each with an RFC 9162 inclusion proof against the latest signed " +
    'checkpoint (offline: `vigil log verify-inclusion`)',
  permission: 'events:read',
  audit: 'read_search_proof',
  params: ProofParams,
  success: {
    status: 200,
    description:
      '`{search, checkpoint, tree_size, records, pending}`: `pending` lists cited seqs the latest checkpoint does ' +
      'not cover yet (ask again after the next one)',
    schema: v.strictObject({
      search: v.strictObject({
        id: v.string(),
        principal: v.nullable(v.string()),
        query: v.string(),
        since: v.string(),
        until: v.string(),
        at: v.string(),
        rows: Count,
      }),
      checkpoint: v.string(),
      tree_size: Count,
      records: v.array(ProvedRecord),
      pending: v.array(Count),
    }),
  },
  errors: [400, 404],
  handle: async (c, { deps }) => {
    const { id } = parseOr400(ProofParams, c.req.param(), 'path');
    const s = searcher(deps);
    if (!deps.transparency) throw new HttpError(404, 'this service keeps no signed checkpoints');
    await deps.readYourWrites();
    const record = deps.reads.record(Number(id));
    if (record?.type !== 'HuntSearched') throw new HttpError(404, `no search ${id}`);
    const search = record.data as v.InferOutput<typeof HuntSearchedSchema>;
    const note = deps.transparency.checkpoint();
    const opened = note !== undefined ? parseNote(note) : undefined;
    const cp = opened?.ok ? parseCheckpoint(opened.text) : undefined;
    if (!note || !cp?.ok) throw new HttpError(404, 'no signed checkpoint yet');
    const size = cp.checkpoint.size;
    const covered = search.cited.filter((seq) => seq <= size);
    const lines = await s.lines(covered);
    const records = covered.flatMap((seq, i) => {
      const line = lines[i];
      if (!line) return [];
      const proof = deps.transparency!.inclusion(seq, size);
      const path = proof.path.map(b64);
      return [{ seq, record: line, leaf_index: seq - 1, leaf_hash: b64(proof.leafHash), inclusion_path: path }];
    });
    return c.json({
      search: {
        id,
        principal: search.principal,
        query: search.query,
        since: search.since,
        until: search.until,
        at: record.at,
        rows: search.rows,
      },
      checkpoint: note,
      tree_size: size,
      records,
      pending: search.cited.filter((seq) => seq > size),
    });
  },
});

/** The hunting routes. */
export const searchRoutes: Route[] = [searchRoute, proofRoute];
