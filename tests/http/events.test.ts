import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

describe('POST /api/v1/events', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  const post = (body: unknown, token = t.tokens.ingestor) => t.request('/api/v1/events', { method: 'POST', token, body: JSON.stringify(body) });

  it('accepts a batch with 202 and an IngestionResult', async () => {
    const res = await post([makeEvent({ id: 'a1' }), makeEvent({ id: 'a2', time: '2026-11-22T09:00:02.123456Z' })]);
    assert.equal(res.status, 202);
    const body = await res.json() as { accepted: Array<{ id: string }>; alerts: unknown[]; incidents: unknown[] };
    assert.deepEqual(body.accepted.map((e) => e.id), ['a1', 'a2']);
    assert.deepEqual([body.alerts, body.incidents], [[], []]);
  });

  it('accepts the {records, context} form', async () => {
    const res = await post({ records: [makeEvent({ id: 'ctx-1' })], context: { from: 'test' } });
    assert.equal(res.status, 202);
  });

  it('is idempotent by id and refuses an id reused with other content', async () => {
    const before = t.inst.log.head().seq;
    assert.equal((await post([makeEvent({ id: 'idem' })])).status, 202);
    const afterFirst = t.inst.log.head().seq;
    assert.equal((await post([makeEvent({ id: 'idem' })])).status, 202);
    const ingested = [...t.inst.log.read(before + 1)].filter((r) => r.type === 'EventsIngested');
    assert.equal(ingested.length, 1, 'the re-sent event is not stored twice');
    assert.ok(afterFirst > before);
    const res = await post([makeEvent({ id: 'idem', severity: 9 }), makeEvent({ id: 'fresh-x' })]);
    assert.equal(res.status, 409);
    const body = await res.json() as { error: string; conflictingIds: string[] };
    assert.match(body.error, /idem/);
    assert.deepEqual(body.conflictingIds, ['idem']);
    const listed = await (await t.request('/api/v1/events?entityKey=ip:10.0.0.1&limit=1000', { token: t.tokens.viewer })).json() as { events: Array<{ id: string }> };
    assert.ok(!listed.events.some((e) => e.id === 'fresh-x'), 'a refused batch stores nothing');
  });

  /** The events the log stored after `seq`, in order. */
  const storedAfter = (seq: number) => [...t.inst.log.read(seq + 1)].filter((r) => r.type === 'EventsIngested').flatMap((r) => (r.data as { events: NormalizedEvent[] }).events);

  it('echoes a body that is one array as its own text, and what it echoes is what was stored', async () => {
    const records = [makeEvent({ id: 'text-1', attributes: { big: 12345678901234567890, escaped: 'ESCAPED' } }), makeEvent({ id: 'text-2' })];
    const text = `\n  ${JSON.stringify(records, null, 2).replace('"ESCAPED"', '"caf\\u00e9"')}\t\r\n`;
    const seq = t.inst.log.head().seq;
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: text });
    assert.equal(res.status, 202);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const answer = await res.text();
    assert.ok(answer.startsWith(`{"accepted":${text.trim()},`), 'the array is echoed byte for byte');
    const body = JSON.parse(answer) as { accepted: unknown[]; duplicates: number; alerts: unknown[]; incidents: unknown[]; refused: unknown[] };
    assert.deepEqual(Object.keys(body), ['accepted', 'duplicates', 'alerts', 'incidents', 'refused']);
    assert.deepEqual(body.refused, [], 'the events route accepts whole or refuses whole');
    assert.deepEqual(body.accepted, storedAfter(seq));
    assert.equal(body.accepted[0]!.attributes.escaped, 'café');
  });

  it('echoes what was stored when a record is not kept as sent, or the body is not one array', async () => {
    // valibot leaves a record's `__proto__` key out of what it accepts: the echo must leave it out too.
    const dropped = `[${JSON.stringify(makeEvent({ id: 'proto-1' })).replace('"attributes":{', '"attributes":{"__proto__":{"x":1},')}]`;
    for (const text of [dropped, JSON.stringify({ records: [makeEvent({ id: 'wrapped-1' })] })]) {
      const seq = t.inst.log.head().seq;
      const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: text });
      assert.equal(res.status, 202);
      const body = await res.json() as { accepted: Array<Record<string, unknown>> };
      assert.deepEqual(body.accepted, storedAfter(seq));
      assert.ok(!Object.hasOwn(body.accepted[0]!.attributes as object, '__proto__'));
    }
  });

  it('echoes the stored events whatever the layout and content of the body (property)', async () => {
    let n = 0;
    // Keys valibot leaves out of an object it accepts (the echo then falls back to the stored events).
    const key = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'id'));
    // Deeper down a `__proto__` key is kept, and stored and echoed as sent (src/log/record.ts).
    const value = (maxDepth: number) => fc.jsonValue({ maxDepth });
    const event = fc.record({ attributes: fc.dictionary(key, value(3), { maxKeys: 5 }), actor: fc.option(fc.dictionary(key, value(2), { maxKeys: 3 }), { nil: null }) });
    const space = fc.string({ unit: fc.constantFrom(' ', '\n', '\r', '\t'), maxLength: 3 });
    await fc.assert(fc.asyncProperty(fc.array(event, { minLength: 1, maxLength: 4 }), fc.constantFrom(undefined, 1, '\t'), space, space, fc.boolean(), async (over, indent, lead, trail, repeat) => {
      const records = over.map((o) => makeEvent({ id: `prop-echo-${n++}`, ...o }));
      if (repeat) records.push(records[0]!);
      const seq = t.inst.log.head().seq;
      const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: `${lead}${JSON.stringify(records, null, indent)}${trail}` });
      assert.equal(res.status, 202);
      const body = await res.json() as { accepted: unknown[]; duplicates: number };
      const stored = storedAfter(seq);
      assert.deepEqual(body.accepted, repeat ? [...stored, stored[0]] : stored);
      assert.equal(body.duplicates, repeat ? 1 : 0);
    }), { numRuns: 60 });
  });

  it('refuses a batch with bad records whole, naming each path', async () => {
    const res = await post([makeEvent({ id: 'ok-1' }), makeEvent({ id: 'bad-1', severity: 11 }), makeEvent({ id: 'bad-2', source: { adapter: 'a', instance: 'b', recordId: 'c', extra: 1 }, category: 'nope' })]);
    assert.equal(res.status, 400);
    const body = await res.json() as { error: string; issues: string[] };
    assert.ok(body.issues.some((i) => i.startsWith('records[1].severity:')), body.issues.join('\n'));
    assert.ok(body.issues.some((i) => i.startsWith('records[2].category:')), body.issues.join('\n'));
    assert.ok(body.issues.some((i) => i.startsWith('records[2].source.extra:')), body.issues.join('\n'));
    assert.ok(!body.issues.some((i) => i.startsWith('records[0]')));
  });

  it('checks every field rule of spec 2.1', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ schemaVersion: 2 }, /schemaVersion/],
      [{ outcome: 'maybe' }, /outcome/],
      [{ time: '2026-11-22 09:00:00' }, /time: expected ISO 8601 date-time/],
      [{ entityKeys: Array.from({ length: 257 }, (_, i) => `k:${i}`) }, /entityKeys/],
      [{ severity: -1 }, /severity/],
      [{ source: { adapter: 'a', instance: 'b' } }, /source.recordId/],
      [{ attributes: undefined }, /attributes/],
      [{ source: { adapter: 'vigil', instance: 'api', recordId: 'forged' } }, /reserved for events Vigil records itself/],
      [{ source: { adapter: 'collector', instance: 'c1', recordId: 'forged' } }, /reserved/],
    ];
    for (const [over, pattern] of cases) {
      const res = await post([makeEvent({ id: 'rule', ...over })]);
      assert.equal(res.status, 400, JSON.stringify(over).slice(0, 80));
      const body = await res.json() as { issues: string[] };
      assert.match(body.issues.join('\n'), pattern);
    }
  });

  it('answers malformed JSON and non-batch bodies with 400', async () => {
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: '[{"id": ' });
    assert.equal(res.status, 400);
    assert.equal((await res.json() as { error: string }).error, 'malformed JSON; expected a JSON array of records, a JSON object {records, context}, or one JSON object per line (Content-Type: application/x-ndjson)');
    assert.equal((await post({ nope: [] })).status, 400);
    assert.equal((await post([])).status, 400);
  });

  it('refuses 1 MiB + 1 byte with 413, with and without Content-Length', async () => {
    const big = `[${' '.repeat(1024 * 1024 - 1)}]`;
    assert.equal(Buffer.byteLength(big), 1024 * 1024 + 1);
    const withLength = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: big, headers: { 'content-length': String(1024 * 1024 + 1) } });
    assert.equal(withLength.status, 413);
    const stream = new ReadableStream<Uint8Array>({
      start(ctrl) {
        const chunk = Buffer.from(big);
        for (let i = 0; i < chunk.length; i += 65536) ctrl.enqueue(chunk.subarray(i, i + 65536));
        ctrl.close();
      },
    });
    const chunked = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: stream, duplex: 'half' } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.match((await chunked.json() as { error: string }).error, /exceeds the limit of 1048576 bytes/);
    const exact = `[${' '.repeat(1024 * 1024 - 2)}]`;
    const ok = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: exact });
    assert.equal(ok.status, 400, 'a body of exactly 1 MiB is read (and is an empty batch)');
  });
});

describe('GET /api/v1/events', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const events = Array.from({ length: 30 }, (_, i) => makeEvent({
      id: `ev-${String(i).padStart(2, '0')}`,
      time: `2026-11-22T08:${String(i).padStart(2, '0')}:00Z`,
      category: i % 2 === 0 ? 'network' : 'identity',
      class: i % 3 === 0 ? 'dns_query' : 'network_connection',
      entityKeys: [`ip:10.0.0.${i % 5}`, 'host:web'],
      source: { adapter: i < 10 ? 'zeek' : 'journal', instance: 'x', recordId: `r${i}` },
    }));
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(events) });
    assert.equal(res.status, 202);
  });
  after(async () => { await t.close(); });

  // Access events of these requests are events too (class api_access, at the test clock's 10:00);
  // `until` keeps the fixture's 08:xx events apart from them.
  const list = async (q: string) => {
    const res = await t.request(`/api/v1/events?${q}${q.includes('until=') ? '' : '&until=2026-11-22T09:00:00Z'}`, { token: t.tokens.viewer });
    assert.equal(res.status, 200, q);
    return await res.json() as { events: Array<{ id: string; category: string; class: string; time: string }>; nextCursor: string | null };
  };

  it('lists newest first and pages with a cursor', async () => {
    const first = await list('limit=12');
    assert.equal(first.events[0]!.id, 'ev-29');
    assert.equal(first.events.length, 12);
    const second = await list(`limit=12&cursor=${first.nextCursor}`);
    const third = await list(`limit=12&cursor=${second.nextCursor}`);
    const ids = [...first.events, ...second.events, ...third.events].map((e) => e.id);
    assert.equal(ids.length, 30);
    assert.equal(new Set(ids).size, 30);
    assert.equal(third.nextCursor, null);
  });

  it('filters by category, class, entity key, adapter and time', async () => {
    assert.ok((await list('category=identity')).events.every((e) => e.category === 'identity'));
    assert.equal((await list('category=identity')).events.length, 15);
    assert.equal((await list('class=dns_query')).events.length, 10);
    assert.equal((await list('entityKey=ip:10.0.0.3')).events.length, 6);
    assert.equal((await list('adapter=zeek')).events.length, 10);
    assert.equal((await list('adapter=zeek&class=dns_query')).events.length, 4);
    const window = await list('since=2026-11-22T08:10:00Z&until=2026-11-22T08:14:00Z');
    assert.deepEqual(window.events.map((e) => e.id), ['ev-14', 'ev-13', 'ev-12', 'ev-11', 'ev-10']);
  });

  it('lists the access events of API requests as identity events', async () => {
    const res = await t.request('/api/v1/events?class=api_access', { token: t.tokens.viewer });
    const body = await res.json() as { events: Array<{ category: string; attributes: { route: string; principal: string } }> };
    assert.ok(body.events.length >= 2);
    assert.ok(body.events.every((e) => e.category === 'identity'));
    assert.ok(body.events.some((e) => e.attributes.route === '/api/v1/events' && e.attributes.principal === 'ingestor-user'));
  });

  it('refuses bad queries with 400', async () => {
    for (const q of ['limit=0', 'limit=1001', 'category=nope', 'since=yesterday', 'cursor=zzz', 'bogus=1']) {
      const res = await t.request(`/api/v1/events?${q}`, { token: t.tokens.viewer });
      assert.equal(res.status, 400, q);
    }
  });
});
