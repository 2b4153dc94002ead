import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A TAXII 2.1 server for the tests, built from the specification (OASIS TAXII 2.1, sections 4 and 5): server
 * discovery at `/taxii2/`, one API root, its collections, and a collection's objects with `added_after`, `limit`,
 * `next` paging, `match[type]`, the envelope `{more, next, objects}` and the `X-TAXII-Date-Added-First/Last` headers.
 * Every answer is `application/taxii+json;version=2.1`; a request whose `Accept` does not take it gets 406, one without
 * the credential 401, as the specification's error message `{title, http_status, description}`.
 */

/** The TAXII 2.1 media type. */
export const TAXII_MEDIA = 'application/taxii+json;version=2.1';

/** One stored object with the time the server added it (the `added_after` filter reads it). */
export interface StoredObject {
  readonly object: Record<string, unknown> & { id: string; type: string };
  readonly dateAdded: string;
}

export interface TaxiiServerOptions {
  /** The collection's objects, in the order the server added them. */
  readonly objects: StoredObject[];
  /** `Bearer <token>` or `Basic <base64>`: the one credential the server takes. */
  readonly authorization: string;
  /** The most objects a page holds (the server's own limit; a client's `limit` may ask for fewer). */
  readonly pageSize?: number;
  /** When false, a page with more to come gives no `next`, so a client must page by `added_after` (spec 3.4). */
  readonly withNext?: boolean;
}

/** A running test server: its discovery URL, the collection's id, the requests it saw, and a way to add objects. */
export interface TaxiiServer {
  readonly discoveryUrl: string;
  readonly apiRootUrl: string;
  readonly collectionId: string;
  readonly requests: Array<{ path: string; query: Record<string, string> }>;
  /** Adds objects now (their `dateAdded` is the time of the call, one millisecond apart). */
  add(objects: Array<Record<string, unknown> & { id: string; type: string }>): void;
  /** Answers every request with 503 while `down` is true. */
  setDown(down: boolean): void;
  close(): Promise<void>;
}

const COLLECTION = '91a7b528-80eb-42ed-a74d-c6fbd5a26116';

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': TAXII_MEDIA, ...headers });
  res.end(JSON.stringify(body));
}

function error(res: ServerResponse, status: number, title: string): void {
  send(res, status, { title, http_status: String(status) });
}

/** Whether an Accept header takes TAXII 2.1 JSON (`application/taxii+json;version=2.1`, or the type without version). */
function acceptsTaxii(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept
    .split(',')
    .map((part) => part.replace(/\s+/g, '').toLowerCase())
    .some((m) => m === TAXII_MEDIA || m === 'application/taxii+json' || m.startsWith(`${TAXII_MEDIA};`));
}

/** Starts the server on a free loopback port. */
export async function startTaxiiServer(options: TaxiiServerOptions): Promise<TaxiiServer> {
  const stored = [...options.objects];
  const pageSize = options.pageSize ?? 100;
  const requests: TaxiiServer['requests'] = [];
  let down = false;
  let base = '';

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({ path: url.pathname, query: Object.fromEntries(url.searchParams) });
    if (down) return error(res, 503, 'down for the test');
    if (req.headers.authorization !== options.authorization) {
      res.setHeader('www-authenticate', 'Bearer, Basic realm="taxii"');
      return error(res, 401, 'authentication required');
    }
    if (!acceptsTaxii(req.headers.accept)) return error(res, 406, 'the Accept header must name ' + TAXII_MEDIA);
    if (req.method !== 'GET') return error(res, 405, 'read only');
    const path = url.pathname;
    if (path === '/taxii2/')
      return send(res, 200, {
        title: 'Vigil test TAXII server',
        default: `${base}/api1/`,
        api_roots: [`${base}/api1/`],
      });
    if (path === '/api1/')
      return send(res, 200, { title: 'API root one', versions: [TAXII_MEDIA], max_content_length: 10_485_760 });
    if (path === '/api1/collections/')
      return send(res, 200, {
        collections: [
          { id: COLLECTION, title: 'Indicators', can_read: true, can_write: false, media_types: [TAXII_MEDIA] },
          { id: '52892447-4d7e-4f70-b94d-d7f22742ff63', title: 'Write only', can_read: false, can_write: true },
        ],
      });
    if (path === `/api1/collections/${COLLECTION}/`)
      return send(res, 200, { id: COLLECTION, title: 'Indicators', can_read: true, can_write: false });
    if (path !== `/api1/collections/${COLLECTION}/objects/`) return error(res, 404, 'no such endpoint');
    // Objects: filtered by added_after (strictly after) and match[type], in the order added, paged.
    const after = url.searchParams.get('added_after');
    const types = url.searchParams.get('match[type]')?.split(',');
    const limit = Math.min(pageSize, Number(url.searchParams.get('limit') ?? pageSize) || pageSize);
    const next = url.searchParams.get('next');
    const matching = stored.filter(
      (s) => (after === null || s.dateAdded > after) && (types === undefined || types.includes(s.object.type)),
    );
    const start = next === null ? 0 : Number.parseInt(next, 10);
    if (!Number.isInteger(start) || start < 0 || start > matching.length) return error(res, 400, 'bad next');
    const page = matching.slice(start, start + limit);
    const more = start + page.length < matching.length;
    const headers: Record<string, string> =
      page.length > 0
        ? { 'X-TAXII-Date-Added-First': page[0]!.dateAdded, 'X-TAXII-Date-Added-Last': page.at(-1)!.dateAdded }
        : {};
    return send(
      res,
      200,
      {
        more,
        ...(more && options.withNext !== false ? { next: String(start + page.length) } : {}),
        ...(page.length > 0 ? { objects: page.map((s) => s.object) } : {}),
      },
      headers,
    );
  };

  const server: Server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let clock = Date.now();
  return {
    discoveryUrl: `${base}/taxii2/`,
    apiRootUrl: `${base}/api1/`,
    collectionId: COLLECTION,
    requests,
    add(objects) {
      for (const object of objects) stored.push({ object, dateAdded: new Date(++clock).toISOString() });
    },
    setDown(d) {
      down = d;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
