import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { listen } from '../../src/http/listen.js';
import { translateRegex } from '../../src/detection/regex.js';
import { makeEvent, startTestInstance } from '../helpers/instance.js';
import { runCli, startServe, writeTestConfig } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

/** One raw HTTP exchange: what the server wrote before it closed the connection (or 2 s passed). */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    const timer = setTimeout(() => { s.destroy(); resolve(out); }, 2000);
    s.on('data', (d) => { out += d.toString('latin1'); });
    s.on('close', () => { clearTimeout(timer); resolve(out); });
    s.on('error', () => undefined);
    s.write(request);
  });
}

describe('edge hardening', () => {
  it('answers a request that cannot become a fetch Request (bad Host, no Host, OPTIONS *) with an ErrorResponse', async () => {
    const server = await listen(() => new Response('{"status":"ok"}', { headers: { 'content-type': 'application/json' } }), '127.0.0.1', 0);
    try {
      const { port } = server.address() as AddressInfo;
      for (const request of ['OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /health HTTP/1.1\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: a b/c\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x:999999\r\n\r\n']) {
        const answer = await exchange(port, request);
        assert.match(answer, /^HTTP\/1\.1 400 /, JSON.stringify(request));
        assert.match(answer, /content-type: application\/json/i, JSON.stringify(request));
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as { error: unknown };
        assert.equal(typeof body.error, 'string', JSON.stringify(request));
      }
      assert.match(await exchange(port, 'GET /health HTTP/1.0\r\n\r\n'), /^HTTP\/1\.1 200 /, 'HTTP/1.0 needs no Host');
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('refuses a graph cursor it did not hand out, as the other listings do, instead of restarting at the first page', async () => {
    const t = await startTestInstance();
    try {
      const events = await (await t.request('/api/v1/events?limit=1', { token: t.tokens.viewer })).json() as { nextCursor: string | null };
      for (const cursor of ['abc', 'W10', events.nextCursor ?? 'WzFd']) {
        const r = await t.request(`/api/v1/graph?cursor=${encodeURIComponent(cursor)}`, { token: t.tokens.viewer });
        assert.equal(r.status, 400, cursor);
        assert.deepEqual(await r.json(), { error: 'invalid query', issues: ['cursor: not a cursor returned by this endpoint'] });
      }
    } finally {
      await t.close();
    }
  });

  it('answers 408 to an admitted ingest request whose body does not arrive in time, and frees its share of the queue', async () => {
    const t = await startTestInstance({ limits: { ingestBodySeconds: 1 } });
    // The deadline's timer does not hold the process (a server's socket does); here nothing else would.
    const alive = setInterval(() => undefined, 1000);
    try {
      const started = Date.now();
      const slow = await t.request('/api/v1/collector/submissions', {
        method: 'POST', token: t.tokens.collector, duplex: 'half',
        body: new ReadableStream<Uint8Array>({ start(c) { c.enqueue(new TextEncoder().encode('{')); /* never ends */ } }),
      } as RequestInit & { token: string });
      assert.equal(slow.status, 408);
      assert.equal(typeof (await slow.json() as { error: unknown }).error, 'string');
      assert.ok(Date.now() - started < 5000);
      const next = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'after-408' })]) });
      assert.equal(next.status, 202, 'the queue is free again');
    } finally {
      clearInterval(alive);
      await t.close();
    }
  });

  it('records a body the client stopped sending as its 400, not as an unhandled error of the service', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const token = (name: string, role: string) => (JSON.parse(runCli(['api-token-generate', name, role, '--config', config]).stdout) as { token: string }).token;
    const ingestor = token('shipper', 'ingestor');
    const viewer = token('watcher', 'viewer');
    const serve = await startServe(config, dir.path);
    try {
      const { port } = new URL(serve.url);
      const head = (framing: string) => `POST /api/v1/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${ingestor}\r\nContent-Type: application/json\r\n${framing}\r\n\r\n`;
      // A declared length never reached, and a chunked body never ended: the client then hangs up.
      for (const request of [`${head('Content-Length: 1000')}[{"id":`, `${head('Transfer-Encoding: chunked')}5\r\n[{"id\r\n`]) {
        await new Promise<void>((resolve) => {
          const s = connect(Number(port), '127.0.0.1', () => { s.write(request); setTimeout(() => s.destroy(), 200); });
          s.on('close', () => resolve());
          s.on('error', () => undefined);
        });
      }
      const counted = async (status: string) => {
        // A scrape job's own `params` are ignored.
        const text = await (await fetch(`${serve.url}/metrics?collect[]=x`, { headers: { authorization: `Bearer ${viewer}` } })).text();
        const line = text.split('\n').find((l) => l.startsWith('vigil_http_request_duration_seconds_count{') && l.includes('route="/api/v1/events"') && l.includes('method="POST"') && l.includes(`status="${status}"`));
        return line === undefined ? 0 : Number(line.split(' ').pop());
      };
      for (let i = 0; i < 50 && (await counted('4xx')) + (await counted('5xx')) < 2; i++) await new Promise((r) => setTimeout(r, 100));
      assert.equal(await counted('4xx'), 2);
      assert.equal(await counted('5xx'), 0);
      assert.doesNotMatch(serve.output(), /"level":"error"/);
    } finally {
      serve.proc.kill('SIGTERM');
      await serve.exited;
      dir.cleanup();
    }
  });

  it('refuses query parameters an operation does not take, and one given twice, instead of ignoring them', async () => {
    const t = await startTestInstance();
    try {
      const ingest = await t.request('/api/v1/events?dryRun=true', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'not-a-dry-run' })]) });
      assert.equal(ingest.status, 400);
      assert.deepEqual(await ingest.json(), { error: 'invalid query', issues: ['dryRun: this operation takes no query parameters'] });
      const listed = await (await t.request('/api/v1/events?limit=1000', { token: t.tokens.viewer })).json() as { events: Array<{ id: string }> };
      assert.ok(!listed.events.some((e) => e.id === 'not-a-dry-run'), 'nothing was ingested');
      const twice = await t.request('/api/v1/alerts?status=open&status=dismissed', { token: t.tokens.viewer });
      assert.equal(twice.status, 400);
      assert.deepEqual((await twice.json() as { issues: string[] }).issues, ['status: given more than once']);
      assert.equal((await t.request('/api/v1/events?x=1', { method: 'POST', body: '[]' })).status, 401, 'who asks comes first');
      assert.equal((await t.request('/api/v1/me?verbose=1', { token: t.tokens.viewer })).status, 400);
      // Probes may add parameters of their own (scrapers too: the served /metrics below).
      assert.equal((await t.request('/health?cachebuster=123')).status, 200);
    } finally {
      await t.close();
    }
  });

  it('matches a pathological Sigma regular expression in linear time', () => {
    const t = translateRegex('^([a-z0-9:]*)*[A-Z]$');
    assert.ok(t.ok);
    const re = new RegExp(t.source, t.flags);
    const started = performance.now();
    assert.equal(re.test(`vigil:api:${'a'.repeat(18)}`), false);
    assert.ok(performance.now() - started < 500, `took ${Math.round(performance.now() - started)} ms`);
  });
});
