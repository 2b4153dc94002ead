import type { Context } from 'hono';
import * as v from 'valibot';
import { accept } from '../../commands/decision.js';
import { parseHunt, printHunt } from '../../detection/hunt/index.js';
import type { HuntSearchedSchema } from '../../events/hunt-events.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { epochMillisOf } from '../../kernel/time.js';
import { encodeCursor } from '../../projections/cursor.js';
import { parseEventCursor } from '../../projections/evidence-query.js';
import type { HuntAnswer } from '../../services/hunt/scan.js';
import { SearchesBusy, type Searcher } from '../../services/hunt/searches.js';
import type { AppDeps, AppEnv } from '../env.js';
import { HttpError } from '../errors.js';
import { executeAudited } from '../request-context.js';

/** The longest query text a search takes. */
export const MAX_QUERY_BYTES = 16 * 1024;
/** The range a search covers when it names none: the last day. */
export const DEFAULT_RANGE_MS = 86_400_000;

/** What a search is asked: the body of `POST /api/v1/search`, and what the console's hunt page asks the same way. */
export const SearchBody = v.strictObject({
  query: v.pipe(v.string(), v.maxLength(MAX_QUERY_BYTES)),
  since: v.optional(IsoDateTime),
  until: v.optional(IsoDateTime),
  limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 100),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/** A search's request, as checked. */
export type SearchRequest = v.InferOutput<typeof SearchBody>;

/** One search run (not yet audited): what was asked, over which range, and the engine's answer. */
export interface SearchRun {
  readonly request: SearchRequest;
  /** The query as Vigil read it (canonical form). */
  readonly printed: string;
  readonly sinceMs: number;
  readonly untilMs: number;
  readonly answer: HuntAnswer;
  readonly took: number;
}

/** The search's range in epoch ms: `until` defaults to now, `since` to a day before `until`. */
export function rangeOf(body: SearchRequest, now: Date): { sinceMs: number; untilMs: number } {
  const untilMs = body.until !== undefined ? epochMillisOf(body.until)! : now.getTime();
  const sinceMs = body.since !== undefined ? epochMillisOf(body.since)! : untilMs - DEFAULT_RANGE_MS;
  if (sinceMs > untilMs) throw new HttpError(400, 'since must not be after until');
  return { sinceMs, untilMs };
}

/** The service's searcher; a service without one answers 404. */
export function searcher(deps: AppDeps): Searcher {
  if (!deps.search) throw new HttpError(404, 'this service runs no searches here');
  return deps.search;
}

/**
 * Runs one search (read-your-writes) within `limits.searchSeconds` and `limits.searchEvents`. A query that does not
 * parse is a 400 with its `position` and `expected`; a bad cursor or range a 400; too many waiting searches a 429.
 * The caller audits it (`auditSearches`) before answering.
 */
export async function runSearch(deps: AppDeps, body: SearchRequest): Promise<SearchRun> {
  const s = searcher(deps);
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
  return { request: body, printed: printHunt(parsed.query), sinceMs, untilMs, answer, took };
}

/** The seqs an answer cites, ascending, each once. */
const citedOf = (a: HuntAnswer): number[] => (a.output === 'events' ? [...new Set(a.seqs)].sort((x, y) => x - y) : []);

const isoOf = (ms: number) => new Date(ms).toISOString();

/** The audit record of one search run by `principal`. */
function searchedOf(run: SearchRun, principal: string | null) {
  const { answer, request } = run;
  const data: v.InferOutput<typeof HuntSearchedSchema> = {
    principal,
    query: request.query,
    since: isoOf(run.sinceMs),
    until: isoOf(run.untilMs),
    output: answer.output,
    rows: answer.output === 'events' ? answer.events.length : answer.rows.length,
    scanned: answer.scanned,
    complete: answer.complete,
    tookMs: run.took,
    cited: citedOf(answer),
    ...(request.cursor !== undefined ? { cursor: request.cursor } : {}),
  };
  return { type: 'HuntSearched' as const, data };
}

/**
 * Writes one `HuntSearched` record per run, in one batch with the request's own access records (so a page that ran
 * several searches is still one request in the audit trail); answers each search's id (its record's seq), in order.
 */
export async function auditSearches(
  c: Context<AppEnv>,
  deps: AppDeps,
  runs: readonly SearchRun[],
  status: number,
): Promise<string[]> {
  const principal = c.get('principal')?.id ?? null;
  const events = runs.map((r) => searchedOf(r, principal));
  // The request's own audit record says what its (first) search asked and answered.
  const first = events[0]?.data;
  if (first) {
    const { principal: _p, tookMs: _t, cited: _c, cursor: _k, ...asked } = first;
    c.set('auditSearch', asked);
  }
  const { records } = await executeAudited(c, deps, () => accept(events, null), status);
  return records.filter((r) => r.type === 'HuntSearched').map((r) => String(r.seq));
}

/** The answer of `POST /api/v1/search` for an audited run. */
export function searchAnswer(run: SearchRun, id: string) {
  const { answer } = run;
  const shown =
    answer.output === 'events'
      ? { events: answer.events, nextCursor: answer.next ? encodeCursor(answer.next) : null }
      : {
          columns: answer.columns,
          rows: answer.rows,
          truncated: answer.truncated,
          coveredSince: answer.coveredSince === null ? null : isoOf(answer.coveredSince),
          nextCursor: null,
        };
  return {
    id,
    query: run.printed,
    since: isoOf(run.sinceMs),
    until: isoOf(run.untilMs),
    output: answer.output,
    ...shown,
    complete: answer.complete,
    scanned: answer.scanned,
    took: run.took,
  };
}
