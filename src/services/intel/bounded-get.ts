/**
 * One bounded GET for the feeds (issue 60): a time limit, a size limit (announced or streamed), no redirects, the
 * credential only in the `Authorization` header and never in an error, which names the URL without its query.
 */

/** A feed request that failed: its status (0 for no answer) and why. */
export class FeedFetchError extends Error {
  override readonly name = 'FeedFetchError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a GET may take. */
export interface GetBounds {
  readonly maxBytes: number;
  readonly timeoutMs: number;
}

/** A URL as errors show it: origin and path, no credentials, no query. */
export const shownUrl = (url: string): string => {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
};

/** Reads an answer's body, refusing one past `max` bytes (announced or streamed). */
async function readCapped(res: Response, max: number, what: string): Promise<Buffer> {
  const announced = Number(res.headers.get('content-length') ?? 'NaN');
  if (announced > max) throw new FeedFetchError(res.status, `${what}: the answer is ${announced} bytes, over ${max}`);
  if (!res.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of res.body) {
    total += chunk.byteLength;
    if (total > max) throw new FeedFetchError(res.status, `${what}: the answer is over ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** GETs `url`; a status other than 2xx is a FeedFetchError naming it (and the body's first words, when text). */
export async function boundedGet(
  url: string,
  headers: Readonly<Record<string, string>>,
  bounds: GetBounds,
  fetchImpl: typeof fetch = fetch,
): Promise<{ status: number; body: Buffer; headers: Headers }> {
  let res: Response;
  try {
    res = await fetchImpl(url, { headers, redirect: 'error', signal: AbortSignal.timeout(bounds.timeoutMs) });
  } catch (err) {
    throw new FeedFetchError(0, `${shownUrl(url)}: no answer (${(err as Error).message})`);
  }
  const body = await readCapped(res, bounds.maxBytes, shownUrl(url));
  return { status: res.status, body, headers: res.headers };
}
