import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { fixturePath } from '../helpers/paths.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { normalizedEvent, eventsIngested, rawRecordsIngested } from '../helpers/event-fixtures.js';
import { exportItems } from '../../src/services/export/items.js';
import type { LogRecord } from '../../src/kernel/record.js';
import type { ExportDestination } from '../../src/services/export/config.js';
import { CATEGORIES } from '../../src/events/normalized-event.js';

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.length > 0);
const jsonl = (path: string) => lines(path).map((l) => JSON.parse(l) as unknown);

type Filter = Pick<ExportDestination, 'carries' | 'events' | 'includeRaw'>;
const EVERYTHING: Filter = { carries: ['alerts', 'incidents', 'events'], includeRaw: false };

/** Every key anywhere in a JSON value. */
function keysOf(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) keysOf(v, out);
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) { out.add(k); keysOf(v, out); }
  return out;
}

describe('export items', () => {
  let t: TestInstance;
  let records: LogRecord[];
  before(async () => {
    t = await startTestInstance({}, { builtinRules: true });
    const ingest = async (path: string, body: unknown) => {
      const res = await t.request(`/api/v1/ingest/${path}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(body) });
      assert.equal(res.status, 202, `${path}: ${await res.text()}`);
    };
    // Every normalizer's samples, as the ingest tests send them.
    for (const folder of ['zeek-docs', 'wrccdc-json-streaming']) {
      const dir = fixturePath('network-monitor', folder);
      for (const file of readdirSync(dir)) await ingest(`network-monitor?logType=${file.replace('.jsonl', '')}`, jsonl(join(dir, file)));
    }
    await ingest('syslog-rfc5424', [...lines(fixturePath('syslog-rfc5424', 'valid.log')), ...lines(fixturePath('syslog-rfc5424', 'constructed-linux-valid.log'))].map((message) => ({ message })));
    await ingest('linux-journal', readdirSync(fixturePath('linux-journal')).flatMap((f) => jsonl(fixturePath('linux-journal', f)))
      .filter((r) => typeof r === 'object' && r !== null && ('__REALTIME_TIMESTAMP' in r || '_SOURCE_REALTIME_TIMESTAMP' in r)));
    await ingest('opentelemetry-log', [JSON.parse(readFileSync(fixturePath('opentelemetry-log', 'otlp-constructed-export-request.json'), 'utf8'))]);
    await ingest('mesh-vpn-logs?logType=network&meshnet=example.ts.net', jsonl(fixturePath('mesh-vpn-logs', 'network-flow-records-constructed.jsonl')));
    await ingest('mesh-vpn-logs?logType=configuration', jsonl(fixturePath('mesh-vpn-logs', 'audit-stream-panther-tests.jsonl')));
    records = [...t.inst.log.read(1)];
  });
  after(async () => { await t.close(); });

  it('sends no raw record and no rawReference from any normalizer unless includeRaw is set', () => {
    const raw = records.filter((r) => r.type === 'RawRecordsIngested');
    assert.ok(new Set(raw.map((r) => (r.data as { normalizer: string }).normalizer)).size >= 5, 'every normalizer was exercised');
    const items = records.flatMap((r) => exportItems(r, EVERYTHING, 'vigil.log/test'));
    assert.ok(items.filter((i) => i.type === 'event').length > 100);
    assert.ok(!keysOf(items).has('rawReference'));
    assert.ok(!items.some((i) => i.type === 'raw'));
    // What leaves of an ingestion is exactly its normalized events, less rawReference: the raw records never do.
    for (const r of raw) {
      const stored = (r.data as { events: Array<Record<string, unknown>> }).events.filter((e) => (e.source as { adapter: string }).adapter !== 'vigil');
      const sent = exportItems(r, EVERYTHING, 'o');
      assert.deepEqual(sent.map((i) => i.data), stored.map(({ rawReference: _r, ...rest }) => rest));
    }
  });

  it('sends raw records and rawReference with includeRaw', () => {
    const items = records.flatMap((r) => exportItems(r, { ...EVERYTHING, includeRaw: true }, 'vigil.log/test'));
    const rawItems = items.filter((i) => i.type === 'raw').map((i) => i.data as { normalizer: string; records: unknown[] });
    const stored = records.filter((r) => r.type === 'RawRecordsIngested').map((r) => r.data as { normalizer: string; records: unknown[] });
    assert.deepEqual(rawItems.map((d) => d.records), stored.map((d) => d.records));
    const events = items.filter((i) => i.type === 'event').map((i) => i.data as { rawReference?: unknown; source: { adapter: string } });
    assert.ok(events.filter((e) => e.source.adapter !== 'vigil').every((e) => typeof e.rawReference === 'string'));
  });

  it('carries alerts with their reviewer, and leaves Vigil\'s own access events out unless asked', async () => {
    const alerts = records.filter((r) => r.type === 'AlertRaised');
    assert.ok(alerts.length > 0, 'the samples raise built-in alerts');
    const alertId = (alerts[0]!.data as { alertId: string }).alertId;
    const res = await t.request(`/api/v1/alerts/${alertId}`, { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'in_review', reason: 'looking' }) });
    assert.equal(res.status, 200);
    const all = [...t.inst.log.read(1)];
    const alertItems = all.flatMap((r) => exportItems(r, { carries: ['alerts'], includeRaw: false }, 'o'));
    const types = new Set(alertItems.map((i) => i.type));
    assert.ok(types.has('alert.raised') && types.has('alert.reviewed'), [...types].join());
    assert.ok([...types].every((x) => ['alert.raised', 'alert.grown', 'alert.reviewed'].includes(x)), [...types].join());
    const review = alertItems.find((i) => i.type === 'alert.reviewed')!;
    assert.equal((review.data as { principal: string }).principal, 'analyst-user');
    assert.equal(review.actor?.id, 'analyst-user');
    const access = all.flatMap((r) => exportItems(r, { carries: ['events'], includeRaw: false }, 'o')).filter((i) => (i.data as { source?: { adapter: string } }).source?.adapter === 'vigil');
    assert.deepEqual(access, []);
    const asked = all.flatMap((r) => exportItems(r, { carries: ['events'], includeRaw: false, events: { adapters: ['vigil'] } }, 'o'));
    assert.ok(asked.length > 0 && asked.every((i) => (i.data as { source: { adapter: string } }).source.adapter === 'vigil'));
  });

  it('sends a bulk review as one alert.reviewed per alert with the reviewer, and the alert and incident workflow as its own items', async () => {
    const alertIds = records.filter((r) => r.type === 'AlertRaised').map((r) => (r.data as { alertId: string }).alertId).slice(0, 2);
    assert.equal(alertIds.length, 2, 'the samples raise two alerts');
    const send = (method: string, path: string, body: unknown) => t.request(path, { method, token: t.tokens.analyst, body: JSON.stringify(body) });
    assert.equal((await send('POST', '/api/v1/alerts/reviews', { alertIds, status: 'dismissed', disposition: 'benign', reason: 'lab traffic' })).status, 200);
    assert.equal((await send('PUT', `/api/v1/alerts/${alertIds[0]}/assignee`, { assignee: 'analyst-user' })).status, 200);
    const incident = await (await send('POST', '/api/v1/incidents', { alertIds, title: 'Lab', reason: 'r' })).json() as { id: string };
    assert.equal((await send('PATCH', `/api/v1/incidents/${incident.id}`, { status: 'closed', reason: 'lab' })).status, 200);
    const bulk = [...t.inst.log.read(1)].filter((r) => r.type === 'AlertsBulkReviewed').at(-1)!;
    const items = exportItems(bulk, { carries: ['alerts'], includeRaw: false }, 'o');
    assert.deepEqual(items.map((i) => [i.id, i.type, (i.data as { alertId: string }).alertId]), alertIds.map((id, n) => [`o/${bulk.seq}/${n}`, 'alert.reviewed', id]));
    assert.deepEqual(Object.keys(items[0]!.data as object).sort(), ['alertId', 'authentication', 'bulk', 'disposition', 'from', 'principal', 'reason', 'to']);
    const types = new Set([...t.inst.log.read(bulk.seq)].flatMap((r) => exportItems(r, { carries: ['alerts', 'incidents'], includeRaw: false }, 'o')).map((i) => i.type));
    for (const type of ['alert.assigned', 'incident.opened', 'incident.status_changed']) assert.ok(types.has(type), `${type} in ${[...types].join()}`);
  });

  it('gives every item a stable id of origin, sequence and place', () => {
    const a = records.flatMap((r) => exportItems(r, EVERYTHING, 'vigil.log/abc'));
    const b = records.flatMap((r) => exportItems(r, EVERYTHING, 'vigil.log/abc'));
    assert.deepEqual(a.map((i) => i.id), b.map((i) => i.id));
    assert.equal(new Set(a.map((i) => i.id)).size, a.length);
    assert.ok(a.every((i) => i.id.startsWith(`vigil.log/abc/${i.seq}/`)));
  });

  it('names an item by its place in the record, so two filters never give one id to different items (property)', () => {
    const arbEvent = fc.record({ category: fc.constantFrom(...CATEGORIES), cls: fc.constantFrom('a', 'b'), adapter: fc.constantFrom('zeek', 'vigil') });
    const arbFilter = fc.record({
      categories: fc.option(fc.subarray([...CATEGORIES], { minLength: 1 }), { nil: undefined }),
      classes: fc.option(fc.subarray(['a', 'b'], { minLength: 1 }), { nil: undefined }),
      adapters: fc.option(fc.subarray(['zeek', 'vigil'], { minLength: 1 }), { nil: undefined }),
    }).map((f) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)));
    fc.assert(fc.property(fc.array(arbEvent, { minLength: 1, maxLength: 8 }), arbFilter, arbFilter, fc.boolean(), fc.boolean(), (specs, f1, f2, raw1, raw2) => {
      const events = specs.map((s, i) => normalizedEvent({ id: `e${i}`, category: s.category, class: s.cls, source: { adapter: s.adapter, instance: 'x', recordId: `r${i}` } }));
      const r = rawRecordsIngested('network-monitor', [{ n: 1 }], events);
      const record: LogRecord = { seq: 7, at: '2026-11-23T00:00:00.000Z', type: r.type, data: r.data, prev: '0'.repeat(64) };
      const what = (i: { type: string; data: unknown }) => (i.type === 'raw' ? 'raw' : (i.data as { id: string }).id);
      const byId = new Map<string, string>();
      for (const f of [{ carries: ['events'] as const, includeRaw: raw1, events: f1 }, { carries: ['events'] as const, includeRaw: raw2, events: f2 }]) {
        for (const item of exportItems(record, { ...f, carries: [...f.carries] }, 'o')) {
          const seen = byId.get(item.id);
          assert.ok(seen === undefined || seen === what(item), `${item.id} names both ${seen} and ${what(item)}`);
          byId.set(item.id, what(item));
        }
      }
    }));
  });

  it('gives an event the same id under any filter: a widened filter sends again what it sent under the same id', () => {
    const login = normalizedEvent({ id: 'login', category: 'identity', class: 'authentication', source: { adapter: 'zeek', instance: 'x', recordId: 'r1' } });
    const conn = normalizedEvent({ id: 'conn', category: 'network', class: 'network_connection', source: { adapter: 'zeek', instance: 'x', recordId: 'r2' } });
    const e = eventsIngested(login, conn);
    const record: LogRecord = { seq: 7, at: '2026-11-23T00:00:00.000Z', type: e.type, data: e.data, prev: '0'.repeat(64) };
    const ids = (categories: Array<(typeof CATEGORIES)[number]>) => exportItems(record, { carries: ['events'], includeRaw: false, events: { categories } }, 'o').map((i) => [i.id, (i.data as { id: string }).id]);
    assert.deepEqual(ids(['identity']), [['o/7/0', 'login']]);
    assert.deepEqual(ids(['network']), [['o/7/1', 'conn']]);
    assert.deepEqual(ids(['identity', 'network']), [['o/7/0', 'login'], ['o/7/1', 'conn']]);
  });

  it('follows the filter and strips rawReference for any event (property)', () => {
    const arbEvent = fc.record({
      category: fc.constantFrom(...CATEGORIES), cls: fc.constantFrom('a', 'b', 'c'), adapter: fc.constantFrom('zeek', 'journal', 'vigil'),
      raw: fc.option(fc.string(), { nil: undefined }),
    });
    fc.assert(fc.property(fc.array(arbEvent, { maxLength: 8 }), fc.record({
      categories: fc.option(fc.subarray([...CATEGORIES], { minLength: 1 }), { nil: undefined }),
      classes: fc.option(fc.subarray(['a', 'b'], { minLength: 1 }), { nil: undefined }),
      adapters: fc.option(fc.subarray(['zeek', 'vigil'], { minLength: 1 }), { nil: undefined }),
    }), fc.boolean(), (specs, filter, includeRaw) => {
      const events = specs.map((s, i) => normalizedEvent({
        id: `e${i}`, category: s.category, class: s.cls, source: { adapter: s.adapter, instance: 'x', recordId: `r${i}` }, ...(s.raw !== undefined ? { rawReference: s.raw } : {}),
      }));
      const e = eventsIngested(...events);
      const record: LogRecord = { seq: 7, at: '2026-11-23T00:00:00.000Z', type: e.type, data: e.data, prev: '0'.repeat(64) };
      const events_ = Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined));
      const items = exportItems(record, { carries: ['events'], includeRaw, events: events_ }, 'o');
      const expected = events.filter((ev) => (filter.adapters ? filter.adapters.includes(ev.source.adapter) : ev.source.adapter !== 'vigil')
        && (!filter.categories || filter.categories.includes(ev.category)) && (!filter.classes || filter.classes.includes(ev.class)));
      assert.deepEqual(items.map((i) => (i.data as { id: string }).id), expected.map((ev) => ev.id));
      if (!includeRaw) assert.ok(!keysOf(items).has('rawReference'));
      else assert.deepEqual(items.map((i) => (i.data as { rawReference?: string }).rawReference), expected.map((ev) => ev.rawReference));
    }));
  });
});
