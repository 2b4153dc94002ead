import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import type { Hono } from 'hono';
import { pageHeaders } from './security.js';

/** One file served under `/assets/`: its bytes, content type and a digest that names its version. */
interface Asset {
  readonly body: Uint8Array;
  readonly type: string;
  readonly etag: string;
}

const TYPES: Readonly<Record<string, string>> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
};

/** The directory of the page assets: `src/http/web/static/` of the source tree the compiled code came from. */
const STATIC_DIR = new URL('../../../../src/http/web/static/', import.meta.url);

/** Reads every asset once, at start: they never change while the process runs. */
function loadAssets(): ReadonlyMap<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(STATIC_DIR)) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
    if (type === undefined) continue;
    const body = readFileSync(new URL(name, STATIC_DIR));
    assets.set(name, { body, type, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` });
  }
  return assets;
}

let loaded: ReadonlyMap<string, Asset> | undefined;

/** The page assets (stylesheet, ES module), loaded on first use. */
export function pageAssets(): ReadonlyMap<string, Asset> {
  loaded ??= loadAssets();
  return loaded;
}

/** The URL of an asset with its version, so a page always loads the bytes it was rendered for. */
export function assetUrl(name: string): string {
  const asset = pageAssets().get(name);
  if (!asset) throw new Error(`no page asset ${name}`);
  return `/assets/${name}?v=${asset.etag.slice(1, 9)}`;
}

/** Serves `/assets/<name>` from memory with the page headers; anything else under it is 404. */
export function registerAssets(app: Hono<any>): void {
  app.get('/assets/:name', pageHeaders(), (c) => {
    const asset = pageAssets().get(c.req.param('name'));
    if (!asset) return c.json({ error: 'no such asset' }, 404);
    if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304);
    c.header('Content-Type', asset.type);
    c.header('ETag', asset.etag);
    c.header('X-Content-Type-Options', 'nosniff');
    return c.body(asset.body as Uint8Array<ArrayBuffer>);
  });
}
