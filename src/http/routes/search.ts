import * as v from 'valibot';
import type { HuntSearchedSchema } from '../../events/hunt-events.js';
import { parseCheckpoint } from '../../log/checkpoint.js';
import { parseNote } from '../../log/signed-note.js';
import { readJsonBody } from '../body.js';
import { auditSearches, runSearch, searchAnswer, SearchBody, searcher } from '../console/hunt-search.js';
import { HttpError, parseOr400 } from '../errors.js';
import { route, type Route } from '../route.js';

/** The longest query text a search takes, and the body of `POST /api/v1/search`. */
export { MAX_QUERY_BYTES, SearchBody } from '../console/hunt-search.js';

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

// The search itself is src/http/console/hunt-search.ts: the console's hunt page runs and audits it the same way.
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
    const body = parseOr400(SearchBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const run = await runSearch(deps, body);
    const [id] = await auditSearches(c, deps, [run], 200);
    return c.json(searchAnswer(run, id!));
  },
});

/** A search's id: the seq of its `HuntSearched` record. */
const SEARCH_ID = /^[1-9]\d{0,14}$/;
const ProofParams = v.object({ id: v.pipe(v.string(), v.maxLength(64)) });
/** Query of the proof: a page of the cited records, from the `from`-th (a record's line can be megabytes). */
const ProofQuery = v.strictObject({
  from: v.optional(v.pipe(v.string(), v.regex(/^\d{1,7}$/, 'expected a position'), v.transform(Number)), '0'),
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/, 'expected 1..100'), v.transform(Number), v.minValue(1), v.maxValue(100)),
    '10',
  ),
});
/** The most record text one page of a proof carries (at least one record, however large). */
const PROOF_PAGE_BYTES = 32 * 1024 * 1024;

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
  query: ProofQuery,
  success: {
    status: 200,
    description:
      '`{search, checkpoint, tree_size, records, nextFrom, pending}`: a page of the cited records the latest ' +
      'checkpoint covers (`from`, `limit`: at most 100, and at most 32 MiB of record text; `nextFrom` goes on); ' +
      '`pending` lists cited seqs it does not cover yet (ask again after the next checkpoint)',
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
      nextFrom: v.nullable(Count),
      pending: v.array(Count),
    }),
  },
  errors: [400, 404],
  handle: async (c, { deps }) => {
    const { id } = parseOr400(ProofParams, c.req.param(), 'path');
    const q = parseOr400(ProofQuery, c.req.query(), 'query');
    const s = searcher(deps);
    if (!deps.transparency) throw new HttpError(404, 'this service keeps no signed checkpoints');
    await deps.readYourWrites();
    const record = SEARCH_ID.test(id) ? deps.reads.record(Number(id)) : undefined;
    if (record?.type !== 'HuntSearched') throw new HttpError(404, `no search ${id}`);
    const search = record.data as v.InferOutput<typeof HuntSearchedSchema>;
    const note = deps.transparency.checkpoint();
    const opened = note !== undefined ? parseNote(note) : undefined;
    const cp = opened?.ok ? parseCheckpoint(opened.text) : undefined;
    if (!note || !cp?.ok) throw new HttpError(404, 'no signed checkpoint yet');
    const size = cp.checkpoint.size;
    const covered = search.cited.filter((seq) => seq <= size);
    const page = covered.slice(q.from, q.from + q.limit);
    const lines = await s.lines(page, PROOF_PAGE_BYTES);
    const next = q.from + lines.length;
    const records = page.slice(0, lines.length).flatMap((seq, i) => {
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
      nextFrom: next < covered.length ? next : null,
      pending: search.cited.filter((seq) => seq > size),
    });
  },
});

/** The hunting routes. */
export const searchRoutes: Route[] = [searchRoute, proofRoute];
