import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { apiToken, runCli, startServe, storedEventIds, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

/**
 * Sends `text` over TCP and resolves with what the server answered and when it closed the socket;
 * `end` half-closes the socket after the text, otherwise it is left open (a slow client).
 */
function exchange(url: string, text: string, end: boolean): Promise<{ answer: string; seconds: number }> {
  const { hostname, port } = new URL(url);
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => (end ? socket.end(text) : socket.write(text)));
    let answer = '';
    socket.on('data', (d) => { answer += d.toString(); });
    socket.on('close', () => resolve({ answer, seconds: (performance.now() - started) / 1000 }));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? undefined : reject(err)));
  });
}

/** Sends raw bytes over TCP and resolves with everything the server answered before closing. */
const rawRequest = (url: string, text: string): Promise<string> => exchange(url, text, true).then((r) => r.answer);

/** Sends `text` and keeps the socket open, as a slow client does. */
const stalled = (url: string, text: string) => exchange(url, text, false);


async function stop(serve: ServeProcess): Promise<void> {
  serve.proc.kill('SIGTERM');
  await serve.exited;
}

/** The entries under `root` that group or others may reach (a folder not 0700, a file with any group or other bit). */
function ownedByOthers(root: string): { checked: number; wrong: string[] } {
  const wrong: string[] = [];
  let checked = 0;
  const walk = (path: string): void => {
    const st = statSync(path);
    checked++;
    const mode = st.mode & 0o777;
    if (st.isDirectory() ? mode !== 0o700 : (mode & 0o077) !== 0) wrong.push(`${path} ${mode.toString(8)}`);
    if (st.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name));
  };
  walk(root);
  return { checked, wrong };
}

describe('vigil serve hardening', () => {
  it('answers what the HTTP parser refuses with an ErrorResponse, keeps its store owner-only and notices an unsafe credentials folder', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const viewer = apiToken(config, 'reader', 'viewer');
    const serve = await startServe(config, dir.path);
    try {
      const big = await rawRequest(serve.url, `GET /api/v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${'a'.repeat(20_000)}\r\n\r\n`);
      assert.match(big, /^HTTP\/1\.1 431 /);
      assert.match(big, /content-type: application\/json/i);
      assert.deepEqual(JSON.parse(big.slice(big.indexOf('\r\n\r\n') + 4)), { error: 'request headers exceed the limit of 16384 bytes' });
      const badLength = await rawRequest(serve.url, 'POST /api/v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 12abc\r\n\r\n{}');
      assert.match(badLength, /^HTTP\/1\.1 400 /);
      assert.match(JSON.parse(badLength.slice(badLength.indexOf('\r\n\r\n') + 4)).error as string, /invalid Content-Length/);
      const garbage = await rawRequest(serve.url, 'NOT HTTP AT ALL\r\n\r\n');
      assert.match(garbage, /^HTTP\/1\.1 400 /);

      for (const file of ['data.mdb', 'lock.mdb']) assert.equal(statSync(join(dir.path, 'store', file)).mode & 0o777, 0o600, file);

      const me = () => fetch(`${serve.url}/api/v1/me`, { headers: { authorization: `Bearer ${viewer}` } }).then((r) => r.status);
      assert.equal(await me(), 200);
      // Everything under the store folder (the read side's environment among it) is the owner's alone.
      const open = ownedByOthers(join(dir.path, 'store'));
      assert.ok(open.checked >= 6, `only ${open.checked} entries under the store`);
      assert.deepEqual(open.wrong, []);
      chmodSync(join(dir.path, 'secrets'), 0o755);
      let status = 200;
      for (let i = 0; i < 50 && status === 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await me();
      }
      assert.equal(status, 401, 'a credentials folder opened to others fails closed');
      assert.match(serve.output(), /accessible to group or others/);
      chmodSync(join(dir.path, 'secrets'), 0o700);
      for (let i = 0; i < 50 && status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        status = await me();
      }
      assert.equal(status, 200, 'and recovers once fixed');
    } finally {
      await stop(serve);
      dir.cleanup();
    }
  });

  it('cuts a slow client on every route class, unauthenticated first, within its timeout, and caps connections per address', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path, { limits: { headerSeconds: 1, requestSeconds: 2, connectionsPerAddress: 12 } });
    const analyst = apiToken(config, 'reviewer', 'analyst');
    const ingestor = apiToken(config, 'loader', 'ingestor');
    const viewer = apiToken(config, 'reader', 'viewer');
    const serve = await startServe(config, dir.path);
    try {
      const body = (method: string, path: string, auth?: string, type = 'application/json') =>
        `${method} ${path} HTTP/1.1\r\nHost: x\r\nOrigin: http://x\r\n` +
        `${auth ? `Authorization: Bearer ${auth}\r\n` : ''}Content-Type: ${type}\r\nContent-Length: 100\r\n\r\nto`;
      const cases: Array<[string, string, number]> = [
        ['stalled headers, unauthenticated', 'GET /health HTTP/1.1\r\nHost: x\r\n', 1],
        ['stalled body, unauthenticated enrollment', body('POST', '/api/v1/collector/enrollments'), 2],
        ['stalled body, console sign-in', body('POST', '/sign-in', undefined, 'application/x-www-form-urlencoded'), 2],
        ['stalled body, authenticated review', body('PATCH', '/api/v1/alerts/none', analyst), 2],
        ['stalled body, ingest', body('POST', '/api/v1/events', ingestor), 2],
      ];
      const results = await Promise.all(cases.map(([, text]) => stalled(serve.url, text)));
      results.forEach(({ answer, seconds }, i) => {
        const [name, , limit] = cases[i]!;
        assert.match(answer, /^HTTP\/1\.1 408 /, `${name}: ${answer.slice(0, 80)}`);
        // Node checks its connections every second: cut within a second (and scheduling) of the limit.
        assert.ok(seconds < limit + 1.8, `${name} was held ${seconds.toFixed(2)} s (limit ${limit} s)`);
      });

      const { hostname, port } = new URL(serve.url);
      const held = await Promise.all(Array.from({ length: 12 }, () => new Promise<import('node:net').Socket>((resolve) => {
        const socket = connect(Number(port), hostname, () => resolve(socket));
      })));
      const refused = await stalled(serve.url, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
      assert.equal(refused.answer, '', 'one connection past the per-address cap is closed before anything is read');
      assert.ok(refused.seconds < 1, `refused after ${refused.seconds} s`);
      for (const socket of held) socket.destroy();
      let metrics = '';
      // Until the server has seen the held sockets close, a new connection may still be past the cap.
      for (let i = 0; i < 50 && metrics === ''; i++) {
        const res = await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${viewer}` } }).catch(() => undefined);
        if (res?.status === 200) metrics = await res.text();
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(metrics, /vigil_http_connections_refused_total\{reason="request_timeout"\} 5/);
      assert.match(metrics, /vigil_http_connections_refused_total\{reason="per_address_cap"\} [1-9]/);
    } finally {
      await stop(serve);
      dir.cleanup();
    }
  });

  it('sends the request id and the no-store, no-sniff and referrer headers with every kind of answer, the ingestion answer byte for byte', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const ingestor = apiToken(config, 'shipper', 'ingestor');
    const serve = await startServe(config, dir.path);
    try {
      const common = (r: Response, what: string, referrer = 'no-referrer') => {
        assert.match(r.headers.get('x-request-id') ?? '', /^[0-9a-f]{16}$/, what);
        assert.equal(r.headers.get('cache-control'), 'no-store', what);
        assert.equal(r.headers.get('x-content-type-options'), 'nosniff', what);
        assert.equal(r.headers.get('referrer-policy'), referrer, what);
      };
      const sent = JSON.stringify([normalizedEvent({ id: 'hdr-1' }), normalizedEvent({ id: 'hdr-2' })]);
      const ingested = await fetch(`${serve.url}/api/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${ingestor}`, 'content-type': 'application/json' }, body: sent });
      assert.equal(ingested.status, 202);
      common(ingested, 'ingestion answer');
      const text = await ingested.text();
      assert.equal(Number(ingested.headers.get('content-length')), Buffer.byteLength(text));
      assert.ok(text.startsWith(`{"accepted":${sent},`), 'the events as sent');
      // An answer another handler replaced (the OTLP route answers in its own format), an error, a page.
      const otlp = await fetch(`${serve.url}/api/v1/otlp/v1/logs`, { method: 'POST', headers: { authorization: `Bearer ${ingestor}`, 'content-type': 'application/json' }, body: '{not json' });
      assert.equal(otlp.status, 400);
      common(otlp, 'OTLP answer');
      const refused = await fetch(`${serve.url}/api/v1/events`, { method: 'POST', body: sent });
      assert.equal(refused.status, 401);
      common(refused, 'error');
      const page = await fetch(`${serve.url}/sign-in`);
      assert.equal(page.status, 200);
      common(page, 'page', 'same-origin');
    } finally {
      await stop(serve);
      dir.cleanup();
    }
  });

  it('under a flood from another process: 429s appear, /health stays within its bound, every 202 is kept', async (t) => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path, { limits: { ingestQueueEvents: 2000, ingestQueueBytes: 512 * 1024 } });
    const ingestor = apiToken(config, 'flooder', 'ingestor');
    const viewer = apiToken(config, 'reader', 'viewer');
    const serve = await startServe(config, dir.path);
    try {
      const acked = join(dir.path, 'acked.txt');
      const flood = spawn(process.execPath, [repoPath('dist', 'tests', 'helpers', 'flood.js'), serve.url, '4', '24', '250', 'f', acked], {
        env: { ...process.env, VIGIL_FLOOD_TOKEN: ingestor }, stdio: ['ignore', 'pipe', 'inherit'],
      });
      let report = '';
      flood.stdout!.on('data', (d: Buffer) => { report += d.toString(); });
      const done = new Promise<number | null>((resolve) => flood.once('exit', resolve));
      let slowest = 0;
      let finished = false;
      void done.then(() => { finished = true; });
      while (!finished) {
        const started = performance.now();
        assert.equal((await fetch(`${serve.url}/health`)).status, 200);
        slowest = Math.max(slowest, performance.now() - started);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(await done, 0);
      const { statuses } = JSON.parse(report) as { statuses: Record<string, number> };
      assert.ok((statuses['429'] ?? 0) > 0, `429s appear under the flood: ${report}`);
      assert.ok((statuses['202'] ?? 0) > 0, `ingest goes on: ${report}`);
      assert.deepEqual(Object.keys(statuses).filter((s) => s !== '202' && s !== '429'), [], report);
      // The bound: a queue of 2,000 events drains in well under a second; 3 s leaves room for a loaded CI machine.
      assert.ok(slowest < 3000, `/health took ${Math.round(slowest)} ms`);

      t.diagnostic(`flood: ${JSON.stringify(statuses)}; slowest /health ${Math.round(slowest)} ms`);
      const ids = readFileSync(acked, 'utf8').split('\n').filter(Boolean);
      const seen = await storedEventIds(serve.url, viewer, 'flood');
      assert.equal(ids.filter((id) => !seen.has(id)).length, 0, 'every acknowledged event is readable');
      assert.equal(seen.size, ids.length, 'nothing refused was stored');
    } finally {
      await stop(serve);
      dir.cleanup();
    }
  });
});
