import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createIngestAdmission } from '../../src/http/admission.js';
import { createRefusalLedger } from '../../src/http/refusals.js';
import { makeEvent, startTestInstance } from '../helpers/instance.js';

type Audit = { status: number; sourceAddress: string; count?: number; reason?: string; firstAt?: string; lastAt?: string };

describe('failed authentication: throttled per address, logged as counted summaries', () => {
  it('20,000 bad-token requests from one address grow the log by a bounded amount', async () => {
    const t = await startTestInstance({ limits: { authFailures: { burst: 20, perMinute: 30 } } });
    try {
      t.setPeer('198.51.100.23');
      const before = t.inst.log.head().seq;
      const statuses = new Map<number, number>();
      for (let i = 0; i < 20_000; i++) {
        const res = await t.request('/api/v1/me', { token: `vgl_guess${i}` });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      }
      await t.flushRefusals();
      const grown = t.inst.log.head().seq - before;
      // The first failure in full (access event + audit record), one summary of the 401s, one of the 429s.
      assert.ok(grown <= 4, `log grew by ${grown} records`);
      assert.equal(statuses.get(401), 20, 'the burst is answered 401');
      assert.equal(statuses.get(429), 19_980, 'then the address is throttled');
      assert.equal((await t.request('/api/v1/me', { token: 'vgl_guess-again' })).status, 429, 'bad tokens still wait');
      const valid = await t.request('/api/v1/audit?limit=10', { token: t.tokens.admin });
      assert.equal(valid.status, 200, 'a valid token from the throttled address is never refused by the throttle');
      t.setPeer('127.0.0.1');
      const entries = (await (await t.request('/api/v1/audit?limit=10', { token: t.tokens.admin })).json() as { entries: Audit[] }).entries;
      const failed = entries.find((e) => e.reason === 'authentication_failed');
      const throttled = entries.find((e) => e.reason === 'throttled');
      assert.deepEqual([failed?.status, failed?.count, failed?.sourceAddress], [401, 20, '198.51.100.23']);
      assert.deepEqual([throttled?.status, throttled?.count], [429, 19_980]);
      assert.ok(failed!.firstAt! <= failed!.lastAt!);
      assert.ok(entries.some((e) => e.status === 401 && e.count === undefined && e.sourceAddress === '198.51.100.23'), 'the first failure is audited in full');
    } finally {
      await t.close();
    }
  });

  it('answers 429 with Retry-After once the bucket is empty, and lets the address in again after it refills', async () => {
    const t = await startTestInstance({ limits: { authFailures: { burst: 3, perMinute: 60 } } });
    try {
      t.setPeer('203.0.113.50');
      for (let i = 0; i < 3; i++) assert.equal((await t.request('/api/v1/me', { token: 'vgl_nope' })).status, 401);
      const throttled = await t.request('/api/v1/me', { token: 'vgl_nope' });
      assert.equal(throttled.status, 429, 'a fourth bad token waits');
      assert.equal((await t.request('/api/v1/me')).status, 429, 'so does a request with no token');
      assert.equal((await t.request('/api/v1/me', { token: t.tokens.viewer })).status, 200, 'a valid token does not wait');
      assert.equal(throttled.headers.get('retry-after'), '1');
      assert.match((await throttled.json() as { error: string }).error, /too many failed authentications/);
      t.setPeer('203.0.113.51');
      assert.equal((await t.request('/api/v1/me', { token: t.tokens.viewer })).status, 200, 'another address is not affected');
      t.setPeer('203.0.113.50');
      t.setNow('2026-11-22T10:00:01.100Z');
      assert.equal((await t.request('/api/v1/me', { token: 'vgl_nope' })).status, 401, 'a refilled bucket takes a bad token again');
    } finally {
      await t.close();
    }
  });

  it('never refuses a valid credential: a bad-token flood from 127.0.0.2 leaves a valid ingestor there ingesting', async () => {
    const t = await startTestInstance({ limits: { authFailures: { burst: 3, perMinute: 1 } } });
    try {
      t.setPeer('127.0.0.2');
      for (let i = 0; i < 25; i++) {
        const bad = await t.request('/api/v1/events', { method: 'POST', token: `vgl_flood${i}`, body: '[]' });
        assert.equal(bad.status, i < 3 ? 401 : 429, `bad token ${i}`);
        const body = JSON.stringify([makeEvent({ id: `flooded-${i}` })]);
        const good = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body });
        assert.equal(good.status, 202, `the valid ingestor's batch ${i} from the flooded address`);
      }
    } finally {
      await t.close();
    }
  });

  it('the ledger never throttles below the burst and always throttles past it (property)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 600 }), fc.array(fc.integer({ min: 0, max: 5000 }), { maxLength: 200 }), (burst, perMinute, gaps) => {
      const ledger = createRefusalLedger({ authFailures: { burst, perMinute }, refusalSummarySeconds: 60 });
      let now = 1_000_000;
      let tokens = burst;
      for (const gap of gaps) {
        now += gap;
        tokens = Math.min(burst, tokens + gap * perMinute / 60_000);
        const wait = ledger.throttledFor('a', now);
        if (tokens >= 1 + 1e-9) assert.equal(wait, 0);
        if (tokens < 1 - 1e-9) assert.ok(wait > 0);
        if (wait === 0) {
          ledger.failed('a', '/r', new Date(now));
          tokens = Math.max(0, tokens - 1);
        }
      }
      const counts = ledger.drain(new Date(now), true);
      assert.ok(counts.length <= 1);
    }));
  });
});

describe('back-pressure on ingest', () => {
  it('admits within the bounds, always admits into an empty queue, and releases on answer', () => {
    const q = createIngestAdmission({ ingestQueueBytes: 1000, ingestQueueEvents: 10 });
    const a = q.admit(600)!;
    assert.ok(a);
    assert.equal(q.admit(600), undefined, 'bytes past the bound');
    const b = q.admit(400)!;
    b.records(10);
    b.release();
    a.records(10);
    assert.equal(q.admit(1), undefined, 'records at the bound');
    a.release();
    a.release();
    assert.deepEqual(q.depth(), { requests: 0, bytes: 0, records: 0 });
    const big = q.admit(5000);
    assert.ok(big, 'one request larger than the queue gets through an empty queue');
  });

  it('answers 429 with Retry-After before reading the body while the queue is full, and stores nothing of it', async () => {
    const t = await startTestInstance({ limits: { ingestQueueBytes: 1024 } });
    try {
      const held = t.app.request('/api/v1/events', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.tokens.ingestor}`, 'content-type': 'application/json', 'content-length': '2000' },
        body: new ReadableStream({ start() { /* never sends: holds its place in the queue */ } }),
        duplex: 'half',
      } as RequestInit);
      await new Promise((r) => setImmediate(r));
      const refused = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'bp-1' })]) });
      assert.equal(refused.status, 429);
      assert.equal(refused.headers.get('retry-after'), '1');
      const body = await refused.json() as { error: string; retryAfterSeconds: number };
      assert.match(body.error, /ingest queue is full/);
      assert.equal(body.retryAfterSeconds, 1);
      const detail = await t.request('/api/v1/health', { token: t.tokens.admin });
      assert.equal(detail.status, 200, 'the health detail does not wait behind the queue');
      assert.equal((await detail.json() as { components: { writer: { queue: { requests: number } } } }).components.writer.queue.requests, 1, 'it shows the request holding the queue');
      assert.equal((await t.request('/health')).status, 200, '/health does not wait behind the queue');
      assert.equal((await t.request('/api/v1/events?limit=10', { token: t.tokens.viewer })).status, 200, 'reads go on');
      void held;
    } finally {
      await t.close();
    }
  });
});

describe('a connection that sends again before its Retry-After', () => {
  it('is held, its body unread, until the Retry-After of its refusal has passed, then admitted if there is room', async () => {
    const t = await startTestInstance({ limits: { ingestQueueBytes: 1024 } });
    try {
      // A first request whose body is still arriving holds the queue.
      let finish!: () => void;
      const body = new TextEncoder().encode(JSON.stringify([makeEvent({ id: 'held-1' })]));
      const held = t.app.request('/api/v1/events', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.tokens.ingestor}`, 'content-type': 'application/json', 'content-length': String(body.byteLength) },
        body: new ReadableStream({ start(controller) { finish = () => { controller.enqueue(body); controller.close(); }; } }),
        duplex: 'half',
      } as RequestInit);
      await new Promise((r) => setImmediate(r));
      // Two connections as Node's server would pass them (the socket is what is remembered).
      const resender = { incoming: { socket: { remoteAddress: '198.51.100.7' } } };
      const other = { incoming: { socket: { remoteAddress: '198.51.100.8' } } };
      const send = async (id: string, env: unknown): Promise<Response> => t.app.request('/api/v1/events', { method: 'POST', headers: { authorization: `Bearer ${t.tokens.ingestor}`, 'content-type': 'application/json' }, body: JSON.stringify([makeEvent({ id })]) }, env as never);
      assert.equal((await send('first-try', resender)).status, 429, 'a first refusal is answered at once');
      assert.equal((await send('other-1', other)).status, 429, 'as on any other connection');
      let answered: number | undefined;
      const early = send('at-once', resender).then((r) => (answered = r.status));
      for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
      assert.equal(answered, undefined, 'sent again at once, it is held instead of refused');
      finish();
      assert.equal((await held).status, 202);
      await early;
      assert.equal(answered, 202, 'once its Retry-After has passed, it is admitted into the queue that has room');
      const listed = await t.request('/api/v1/events?limit=10', { token: t.tokens.viewer });
      assert.ok(((await listed.json()) as { events: Array<{ id: string }> }).events.some((e) => e.id === 'at-once'), 'the held request was stored');
    } finally {
      await t.close();
    }
  });
});

describe('a read side too far behind', () => {
  it('is a 503 ErrorResponse with Retry-After, not a stale answer', async () => {
    const { Hono } = await import('hono');
    const { readYourWritesOf } = await import('../../src/http/read-consistency.js');
    const { ReadSideLagging } = await import('../../src/projections/read-side/read-side.js');
    const { HttpError, sendError } = await import('../../src/http/errors.js');
    const app = new Hono();
    const wait = readYourWritesOf(() => Promise.reject(new ReadSideLagging('the read side has folded record 3 of 9')));
    app.get('/r', async (c) => { await wait(); return c.json({ stale: true }); });
    app.onError((err, c) => (err instanceof HttpError ? sendError(c, err) : c.json({ error: 'internal' }, 500)));
    const res = await app.request('/r');
    assert.equal(res.status, 503);
    assert.equal(res.headers.get('retry-after'), '5');
    const body = await res.json() as { error: string; retryAfterSeconds: number };
    assert.match(body.error, /read side is catching up .*record 3 of 9/);
    assert.equal(body.retryAfterSeconds, 5);
  });
});
