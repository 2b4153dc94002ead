import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseHunt } from '../detection/hunt/index.js';
import { CliError } from './cli-error.js';
import { noMoreThan, parseCommandArgs, usageError } from './usage.js';

const OPTIONS = {
  since: { type: 'string' },
  until: { type: 'string' },
  limit: { type: 'string' },
  all: { type: 'boolean' },
  'max-pages': { type: 'string' },
  json: { type: 'boolean' },
  url: { type: 'string' },
  proof: { type: 'string' },
  out: { type: 'string' },
} as const;

/** A page of `POST /api/v1/search`, as far as the terminal reads it. */
interface Answer {
  id: string;
  query: string;
  since: string;
  until: string;
  output: 'events' | 'rows';
  events?: Array<Record<string, unknown>>;
  columns?: string[];
  rows?: Array<Array<string | number | null>>;
  nextCursor: string | null;
  complete: boolean;
  scanned: number;
  took: number;
  coveredSince?: string | null;
}

const RELATIVE = /^(\d{1,6})([smhd])$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--since`/`--until`: an ISO 8601 time, or `30m`, `24h`, `7d` before now. */
export function timeArg(text: string, name: string, now: Date): string {
  const rel = RELATIVE.exec(text);
  if (rel) return new Date(now.getTime() - Number(rel[1]) * UNIT_MS[rel[2] as keyof typeof UNIT_MS]).toISOString();
  if (Number.isNaN(Date.parse(text)) || !/^\d{4}-\d{2}-\d{2}T/.test(text))
    throw usageError('search', `--${name}: expected an ISO 8601 time or a span ago such as 30m, 24h, 7d`);
  return text;
}

async function call(url: string, token: string, path: string, init: RequestInit = {}): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(new URL(path, url), {
      ...init,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    });
  } catch (err) {
    throw new CliError(`${url}: ${(err as Error).message}`, 1);
  }
  const body = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  if (res.ok) return body;
  const where = typeof body.position === 'number' ? ` (at ${body.position})` : '';
  throw new CliError(`the server answered ${res.status}: ${String(body.error ?? 'no error message')}${where}`, 1);
}

/** One event as a terminal line: time, class, activity, outcome, entity keys, id. */
function eventLine(e: Record<string, unknown>): string {
  const keys = Array.isArray(e.entityKeys) ? (e.entityKeys as string[]).slice(0, 4).join(',') : '';
  return [e.time, e.class, e.activity, e.outcome, keys, e.id]
    .map((x) => (x === undefined ? '-' : String(x)))
    .join('\t');
}

/**
 * `vigil search 'QUERY'`: a hunt over a running instance (docs/hunting.md), its events or rows on stdout, every page
 * an audited search; `vigil search --proof ID --out DIR`: a search's cited records, checkpoint and proofs as files
 * `vigil log verify-inclusion` checks offline.
 */
export async function runSearchCommand(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (line: string) => void,
  err: (line: string) => void,
  now = new Date(),
): Promise<number> {
  const { values, positionals } = parseCommandArgs('search', args, OPTIONS);
  const token = env.VIGIL_TOKEN;
  if (!token) throw new CliError('search: set VIGIL_TOKEN to a token with events:read (never on the command line)', 2);
  const url = values.url ?? 'http://127.0.0.1:4173';
  if (values.proof !== undefined) {
    noMoreThan('search', positionals, 0);
    if (!values.out) throw usageError('search', 'search --proof ID: --out DIR is required');
    return writeProof(url, token, values.proof, values.out, out);
  }
  noMoreThan('search', positionals, 1);
  const query = positionals[0];
  if (query === undefined) throw usageError('search', "search: expected a QUERY ('*' for every event)");
  // A query that does not parse is shown with a caret under where, before anything is asked of the server.
  const parsed = parseHunt(query);
  if (!parsed.ok) {
    const caret = `${' '.repeat(Math.min(parsed.error.position, 200))}^`;
    throw new CliError(`query: ${parsed.error.message}\n  ${query.slice(0, 240)}\n  ${caret}`, 1);
  }
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw usageError('search', '--limit: expected 1..1000');
  const maxPages = values['max-pages'] === undefined ? 100 : Number(values['max-pages']);
  if (!Number.isInteger(maxPages) || maxPages < 1)
    throw usageError('search', '--max-pages: expected a positive integer');
  const body = {
    query,
    limit,
    ...(values.since !== undefined ? { since: timeArg(values.since, 'since', now) } : {}),
    ...(values.until !== undefined ? { until: timeArg(values.until, 'until', now) } : {}),
  };
  let cursor: string | null = null;
  for (let page = 1; ; page++) {
    const a = (await call(url, token, '/api/v1/search', {
      method: 'POST',
      body: JSON.stringify(cursor ? { ...body, cursor } : body),
    })) as Answer;
    if (values.json) out(JSON.stringify(a));
    else if (a.output === 'rows') {
      out(a.columns!.join('\t'));
      for (const r of a.rows!) out(r.map((c) => (c === null ? '-' : String(c))).join('\t'));
    } else for (const e of a.events!) out(eventLine(e));
    const partial = a.complete
      ? ''
      : `, incomplete: a bound stopped the scan${a.coveredSince ? ` at ${a.coveredSince}` : ''}`;
    const answered = a.events?.length ?? a.rows?.length;
    err(`search ${a.id}: ${answered} ${a.output}, ${a.scanned} scanned in ${a.took} ms${partial}`);
    cursor = a.nextCursor;
    if (!values.all || cursor === null || page >= maxPages) break;
  }
  return 0;
}

/**
 * Writes a search's proof as files, page after page: checkpoint.txt, and per cited record <seq>.record and
 * <seq>.proof.json (all against the checkpoint of the first page, so a later checkpoint cannot mix in).
 */
async function writeProof(url: string, token: string, id: string, dir: string, out: (l: string) => void) {
  if (!/^[1-9]\d{0,14}$/.test(id)) throw usageError('search', '--proof: expected a search id (a number)');
  mkdirSync(dir, { recursive: true });
  const seqs: number[] = [];
  let pending: number[] = [];
  let checkpoint: string | undefined;
  for (let from: number | null = 0; from !== null;) {
    const p = (await call(url, token, `/api/v1/search/${id}/proof?from=${from}&limit=100`)) as {
      checkpoint: string;
      records: Array<{ seq: number; record: string; inclusion_path: string[] }>;
      nextFrom: number | null;
      pending: number[];
    };
    // A checkpoint signed between two pages: start again against it.
    if (checkpoint !== undefined && p.checkpoint !== checkpoint) return writeProof(url, token, id, dir, out);
    checkpoint = p.checkpoint;
    pending = p.pending;
    for (const r of p.records) {
      writeFileSync(join(dir, `${r.seq}.record`), `${r.record}\n`);
      writeFileSync(join(dir, `${r.seq}.proof.json`), `${JSON.stringify({ inclusion_path: r.inclusion_path })}\n`);
      seqs.push(r.seq);
    }
    from = p.nextFrom;
  }
  writeFileSync(join(dir, 'checkpoint.txt'), checkpoint!);
  out(JSON.stringify({ search: id, records: seqs, pending, dir }));
  return 0;
}
