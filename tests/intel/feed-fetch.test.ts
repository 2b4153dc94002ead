import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FeedFetchError } from '../../src/services/intel/bounded-get.js';
import { fetchDocument, fetchMispFeed } from '../../src/services/intel/feed-fetch.js';
import { tempDir } from '../helpers/temp.js';

const A = '5b0b6e3b-0b5a-4c3e-8d1b-000000000001';
const B = '5b0b6e3b-0b5a-4c3e-8d1b-000000000002';
const event = (uuid: string, domain: string) => ({ Event: { uuid, info: 'test', Attribute: [{ uuid: `${uuid.slice(0, -1)}9`, type: 'domain', value: domain, to_ids: true }] } });
const bounds = { maxBytes: 1 << 20, timeoutMs: 5000, maxEvents: 100 };

describe('fetching feed documents', () => {
  const dir = tempDir('vigil-feed-');
  let server: Server;
  let base: string;
  const seen: string[] = [];
  before(async () => {
    await writeFile(join(dir.path, 'manifest.json'), JSON.stringify({ [A]: { timestamp: 1700000000, info: 'a' }, [B]: { timestamp: 1700000100, info: 'b' } }));
    await writeFile(join(dir.path, `${A}.json`), JSON.stringify(event(A, 'evil-a.example')));
    await writeFile(join(dir.path, `${B}.json`), JSON.stringify(event(B, 'evil-b.example')));
    // A MISP feed as a web server serves the folder; a request without the credential is refused.
    server = createServer((req, res) => {
      seen.push(req.url ?? '');
      if (req.headers.authorization !== 'Basic dmlnaWw6ZmVlZA==') { res.writeHead(401).end(); return; }
      readFile(join(dir.path, (req.url ?? '/').slice(1))).then(
        (body) => res.writeHead(200, { 'content-type': 'application/json' }).end(body),
        () => res.writeHead(404).end(),
      );
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    dir.cleanup();
  });

  it('reads a document from a file or a URL with its SHA-256, and refuses one over its size', async () => {
    const file = await fetchDocument(join(dir.path, `${A}.json`), undefined, bounds);
    const web = await fetchDocument(`${base}${A}.json`, 'Basic dmlnaWw6ZmVlZA==', bounds);
    assert.deepEqual(web.body, file.body);
    assert.equal(web.sha256, file.sha256);
    assert.match(web.sha256, /^[0-9a-f]{64}$/);
    await assert.rejects(fetchDocument(`${base}${A}.json`, 'Basic dmlnaWw6ZmVlZA==', { ...bounds, maxBytes: 10 }), /over 10/);
    await assert.rejects(fetchDocument(join(dir.path, `${A}.json`), undefined, { ...bounds, maxBytes: 10 }), /over 10/);
    await assert.rejects(fetchDocument(`${base}${A}.json`, undefined, bounds), (e: unknown) => e instanceof FeedFetchError && e.status === 401);
    await assert.rejects(fetchDocument('relative/path.json', undefined, bounds), /absolute path or a URL/);
  });

  it('fetches a MISP feed: the manifest, then only the events that changed; those that left are removed', async () => {
    const auth = 'Basic dmlnaWw6ZmVlZA==';
    const first = await fetchMispFeed(base, new Map(), auth, bounds);
    assert.deepEqual(first.changed.map((c) => c.uuid).sort(), [A, B]);
    assert.deepEqual(first.removed, []);
    const known = new Map(first.manifest.map((m) => [m.uuid, m.timestamp]));
    seen.length = 0;
    const again = await fetchMispFeed(base, known, auth, bounds);
    assert.deepEqual(again.changed, []);
    assert.deepEqual(seen, ['/manifest.json'], 'nothing but the manifest when nothing changed');
    assert.equal(again.sha256, first.sha256);
    // B changes, A leaves the manifest, from a folder this time.
    await writeFile(join(dir.path, 'manifest.json'), JSON.stringify({ [B]: { timestamp: 1700000200 } }));
    const later = await fetchMispFeed(`${dir.path}/`, known, undefined, bounds);
    assert.deepEqual(later.changed.map((c) => [c.uuid, c.timestamp]), [[B, 1700000200]]);
    assert.deepEqual(later.removed, [A]);
    assert.notEqual(later.sha256, first.sha256);
    const bounded = await fetchMispFeed(base, new Map(), auth, { ...bounds, maxEvents: 0 });
    assert.deepEqual(bounded.changed, [], 'at most maxEvents a fetch; the rest come next time');
  });
});
