import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { FeedFetchError, boundedGet, shownUrl, type GetBounds } from './bounded-get.js';

/**
 * Fetching the documents of the feeds that are not TAXII (issue 60): a STIX bundle or a list from a file or an HTTP(S)
 * URL, and a MISP feed (its `manifest.json`, then the events that changed since the last fetch). What is fetched is
 * returned as it came, with its SHA-256, for the readers (src/detection/intel) to turn into indicators.
 */

/** A fetched document: its bytes and their SHA-256 (hex), the version a feed records when nothing else names one. */
export interface FetchedDocument {
  readonly body: Buffer;
  readonly sha256: string;
}

const digest = (body: Buffer) => createHash('sha256').update(body).digest('hex');

/** Reads a local file (an absolute path) up to `maxBytes`. */
async function readLocal(path: string, maxBytes: number): Promise<Buffer> {
  const file = await open(path, 'r').catch((err: NodeJS.ErrnoException) => {
    throw new FeedFetchError(0, `${path}: cannot be read (${err.code ?? err.message})`);
  });
  try {
    const size = (await file.stat()).size;
    if (size > maxBytes) throw new FeedFetchError(0, `${path}: ${size} bytes, over ${maxBytes}`);
    return await file.readFile();
  } finally {
    await file.close();
  }
}

/**
 * One document of a feed: an absolute file path, or an `http(s)://` URL GET with the feed's credential. A status
 * other than 200 is a FeedFetchError.
 */
export async function fetchDocument(
  location: string,
  authorization: string | undefined,
  bounds: GetBounds,
  fetchImpl: typeof fetch = fetch,
): Promise<FetchedDocument> {
  if (location.startsWith('/')) {
    const body = await readLocal(location, bounds.maxBytes);
    return { body, sha256: digest(body) };
  }
  if (!/^https?:\/\//.test(location)) throw new FeedFetchError(0, 'a feed location is an absolute path or a URL');
  const res = await boundedGet(location, authorization ? { authorization } : {}, bounds, fetchImpl);
  if (res.status !== 200) throw new FeedFetchError(res.status, `${shownUrl(location)}: ${res.status}`);
  return { body: res.body, sha256: digest(res.body) };
}

/** One event of a MISP feed's manifest: its uuid and the timestamp of its last change (seconds, as MISP writes it). */
export interface MispManifestEntry {
  readonly uuid: string;
  readonly timestamp: number;
}

/** What a MISP feed fetch brought: the manifest, the events that changed (as JSON), and the events no longer listed. */
export interface MispFetch {
  readonly manifest: readonly MispManifestEntry[];
  readonly changed: ReadonlyArray<{ readonly uuid: string; readonly timestamp: number; readonly event: unknown }>;
  readonly removed: readonly string[];
  /** The manifest's SHA-256: the feed's version. */
  readonly sha256: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The entries of a MISP feed's `manifest.json` (`{<uuid>: {timestamp, ...}}`); a malformed one is an error. */
export function mispManifestEntries(json: unknown): MispManifestEntry[] {
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    throw new FeedFetchError(200, 'manifest.json: expected an object of events by uuid');
  return Object.entries(json as Record<string, unknown>).map(([uuid, v]) => {
    const ts = Number((v as { timestamp?: unknown } | null)?.timestamp);
    if (!UUID.test(uuid) || !Number.isFinite(ts)) throw new FeedFetchError(200, `manifest.json: bad entry ${uuid}`);
    return { uuid: uuid.toLowerCase(), timestamp: ts };
  });
}

/**
 * Fetches a MISP feed at `base` (a URL or folder ending in `/`): `manifest.json`, then `<uuid>.json` of each event
 * whose timestamp differs from `known`'s (at most `maxEvents` of them a fetch; the rest come next time). Events that
 * left the manifest are `removed`.
 */
export async function fetchMispFeed(
  base: string,
  known: ReadonlyMap<string, number>,
  authorization: string | undefined,
  bounds: GetBounds & { readonly maxEvents: number },
  fetchImpl: typeof fetch = fetch,
): Promise<MispFetch> {
  const root = base.endsWith('/') ? base : `${base}/`;
  const at = (name: string) => (root.startsWith('/') ? `${root}${name}` : new URL(name, root).toString());
  const manifestDoc = await fetchDocument(at('manifest.json'), authorization, bounds, fetchImpl);
  let parsed: unknown;
  try {
    parsed = JSON.parse(manifestDoc.body.toString('utf8'));
  } catch {
    throw new FeedFetchError(200, 'manifest.json: not JSON');
  }
  const manifest = mispManifestEntries(parsed);
  const listed = new Set(manifest.map((m) => m.uuid));
  const changed: Array<MispFetch['changed'][number]> = [];
  for (const m of manifest) {
    if (known.get(m.uuid) === m.timestamp) continue;
    if (changed.length >= bounds.maxEvents) break;
    const doc = await fetchDocument(at(`${m.uuid}.json`), authorization, bounds, fetchImpl);
    let event: unknown;
    try {
      event = JSON.parse(doc.body.toString('utf8'));
    } catch {
      throw new FeedFetchError(200, `${m.uuid}.json: not JSON`);
    }
    changed.push({ uuid: m.uuid, timestamp: m.timestamp, event });
  }
  const removed = [...known.keys()].filter((uuid) => !listed.has(uuid));
  return { manifest, changed, removed, sha256: manifestDoc.sha256 };
}
