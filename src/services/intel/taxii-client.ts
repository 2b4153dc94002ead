import { FeedFetchError, boundedGet, shownUrl } from './bounded-get.js';

/**
 * A TAXII 2.1 client for one collection (OASIS TAXII 2.1): server discovery, the API root, the collection (it must be
 * readable), then its objects added after a point, page after page by `next`, or, where a server pages without `next`,
 * by `added_after` from the `X-TAXII-Date-Added-Last` header (spec 3.4). Every request asks for
 * `application/taxii+json;version=2.1`; every answer is bounded in size, time and count. The credential goes only in
 * the `Authorization` header and never into an error.
 */

/** The TAXII 2.1 media type. */
export const TAXII_MEDIA = 'application/taxii+json;version=2.1';

/** Where a collection is: a discovery URL (`…/taxii2/`) or an API root URL, and the collection's id or title. */
export interface TaxiiSource {
  readonly url: string;
  /** The collection's `id`, or its `title` when no id matches. */
  readonly collection: string;
  /** `Bearer …` or `Basic …`, read from the feed's secret file. */
  readonly authorization?: string;
}

/** How far one poll goes. */
export interface TaxiiBounds {
  readonly maxPages: number;
  readonly maxObjects: number;
  /** The largest answer read (a larger one is an error). */
  readonly maxBytes: number;
  /** Each request's own time limit. */
  readonly timeoutMs: number;
  /** The `limit` asked of each page. */
  readonly pageSize: number;
}

/** Bounds for a poll: 200 pages of 1,000, 100,000 objects, 32 MiB an answer, 30 s a request. */
export const DEFAULT_TAXII_BOUNDS: TaxiiBounds = {
  maxPages: 200,
  maxObjects: 100_000,
  maxBytes: 32 * 1024 * 1024,
  timeoutMs: 30_000,
  pageSize: 1000,
};

/** What one poll brought. */
export interface TaxiiPoll {
  readonly objects: unknown[];
  /** The newest `date_added` the server reported (`X-TAXII-Date-Added-Last`): the next poll's `added_after`. */
  readonly addedLast?: string;
  readonly pages: number;
  /** False when a bound stopped the poll with more to come: the next poll resumes after `addedLast`. */
  readonly complete: boolean;
  /** The collection's URL the objects came from. */
  readonly collectionUrl: string;
}

type Fetch = typeof fetch;

/** GETs a TAXII endpoint and parses its JSON; a TAXII error message's title and description go into the error. */
async function getJson(
  fetchImpl: Fetch,
  url: string,
  source: TaxiiSource,
  bounds: TaxiiBounds,
): Promise<{ body: Record<string, unknown>; headers: Headers }> {
  const res = await boundedGet(
    url,
    { accept: TAXII_MEDIA, ...(source.authorization ? { authorization: source.authorization } : {}) },
    bounds,
    fetchImpl,
  );
  const text = res.body.toString('utf8');
  let body: unknown;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new FeedFetchError(res.status, `${shownUrl(url)}: answered ${res.status} with a body that is not JSON`);
  }
  if (res.status < 200 || res.status > 299) {
    const e = body as { title?: unknown; description?: unknown };
    const said = [e.title, e.description].filter((x) => typeof x === 'string').join(': ');
    throw new FeedFetchError(res.status, `${shownUrl(url)}: ${res.status}${said ? ` ${said.slice(0, 300)}` : ''}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new FeedFetchError(res.status, `${shownUrl(url)}: the answer is not a JSON object`);
  return { body: body as Record<string, unknown>, headers: res.headers };
}

/** A source's API root: its URL if it is one (it answers `versions`), else the discovery's default or first root. */
async function apiRootOf(fetchImpl: Fetch, source: TaxiiSource, bounds: TaxiiBounds): Promise<string> {
  const { body } = await getJson(fetchImpl, source.url, source, bounds);
  if (Array.isArray(body['versions'])) return source.url;
  const roots = Array.isArray(body['api_roots']) ? body['api_roots'].filter((r) => typeof r === 'string') : [];
  const chosen = typeof body['default'] === 'string' ? body['default'] : roots[0];
  if (typeof chosen !== 'string')
    throw new FeedFetchError(
      200,
      `${shownUrl(source.url)}: neither an API root nor a discovery answer with an API root`,
    );
  const root = new URL(chosen, source.url).toString();
  return root.endsWith('/') ? root : `${root}/`;
}

/** The readable collection of a source in an API root, by id (or title). */
async function collectionUrlOf(
  fetchImpl: Fetch,
  root: string,
  source: TaxiiSource,
  bounds: TaxiiBounds,
): Promise<string> {
  const { body } = await getJson(fetchImpl, new URL('collections/', root).toString(), source, bounds);
  const list = Array.isArray(body['collections']) ? (body['collections'] as Array<Record<string, unknown>>) : [];
  const found = list.find((c) => c['id'] === source.collection) ?? list.find((c) => c['title'] === source.collection);
  if (!found || typeof found['id'] !== 'string')
    throw new FeedFetchError(404, `${shownUrl(root)}: no collection ${source.collection.slice(0, 128)}`);
  if (found['can_read'] !== true)
    throw new FeedFetchError(403, `${shownUrl(root)}: collection ${found['id']} cannot be read with this credential`);
  return new URL(`collections/${encodeURIComponent(found['id'])}/`, root).toString();
}

/**
 * Polls a collection for the objects added after `addedAfter` (all of them when none), following `next`, or
 * `added_after` from `X-TAXII-Date-Added-Last` where the server gives no `next`, until `more` is false or a bound is
 * reached. Throws a FeedFetchError for any request that fails, so a caller keeps what it had.
 */
export async function pollTaxiiCollection(
  source: TaxiiSource,
  addedAfter?: string,
  bounds: TaxiiBounds = DEFAULT_TAXII_BOUNDS,
  fetchImpl: Fetch = fetch,
): Promise<TaxiiPoll> {
  const root = await apiRootOf(fetchImpl, source, bounds);
  const collectionUrl = await collectionUrlOf(fetchImpl, root, source, bounds);
  const objects: unknown[] = [];
  let after = addedAfter;
  let next: string | undefined;
  let addedLast = addedAfter;
  for (let pages = 1; ; pages++) {
    const url = new URL('objects/', collectionUrl);
    url.searchParams.set('limit', String(bounds.pageSize));
    if (after !== undefined) url.searchParams.set('added_after', after);
    if (next !== undefined) url.searchParams.set('next', next);
    const { body, headers } = await getJson(fetchImpl, url.toString(), source, bounds);
    const page = Array.isArray(body['objects']) ? body['objects'] : [];
    objects.push(...page);
    const last = headers.get('x-taxii-date-added-last') ?? undefined;
    if (last !== undefined && (addedLast === undefined || last > addedLast)) addedLast = last;
    const done = { objects, pages, collectionUrl, ...(addedLast !== undefined ? { addedLast } : {}) };
    if (body['more'] !== true) return { ...done, complete: true };
    if (pages >= bounds.maxPages || objects.length >= bounds.maxObjects) return { ...done, complete: false };
    if (typeof body['next'] === 'string' && body['next'] !== '') next = body['next'];
    else if (last !== undefined && last !== after) {
      next = undefined;
      after = last;
    } else
      throw new FeedFetchError(
        200,
        `${shownUrl(url.toString())}: more to come, but neither next nor a newer date added`,
      );
  }
}
