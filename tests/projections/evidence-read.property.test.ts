import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { open, type Database, type RootDatabase } from 'lmdb';
import { EVIDENCE_DBS, eventTimeMs, evidenceReadIndex } from '../../src/projections/evidence.js';
import { eventsInTimeOrder, listEvents, parseEventCursor, type EventCursor, type EventFilter } from '../../src/projections/evidence-query.js';
import type { ReadModels } from '../../src/projections/runtime.js';
import type { IndexKey } from '../../src/projections/types.js';
import type { LogRecord } from '../../src/kernel/record.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { isoFromNanos } from '../../src/kernel/time.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

const BASE_NS = 1_795_000_000_000_000_000n; // 2026-11-17

/** Event times close together, so seconds are shared and times tie; some with microseconds, a few long ago. */
const timeArb = fc.oneof(
  fc.integer({ min: 0, max: 12 }).map((k) => BASE_NS + BigInt(k) * 400_000_000n),
  fc.tuple(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: 999_999 })).map(([s, us]) => BASE_NS + BigInt(s) * 1_000_000_000n + BigInt(us) * 1000n),
  fc.constant(-86_400_000_000_000n),
).map(isoFromNanos);

const eventArb = fc.record({
  time: timeArb,
  category: fc.constantFrom('network', 'identity'),
  class: fc.constantFrom('network_connection', 'dns_query'),
  adapter: fc.constantFrom('zeek', 'journal'),
  keys: fc.array(fc.constantFrom('ip:10.0.0.1', 'ip:10.0.0.2', 'host:web', 'user:alice'), { maxLength: 4 }),
});

type Generated = fc.Arbitrary<Array<Array<{ time: string; category: string; class: string; adapter: string; keys: string[] }>>>;
const recordsArb: Generated = fc.array(fc.array(eventArb, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 8 });

const filterArb = fc.record({
  category: fc.option(fc.constantFrom('network', 'identity'), { nil: undefined }),
  class: fc.option(fc.constantFrom('network_connection', 'dns_query'), { nil: undefined }),
  adapter: fc.option(fc.constantFrom('zeek', 'journal', 'none'), { nil: undefined }),
  entityKey: fc.option(fc.constantFrom('ip:10.0.0.1', 'host:web', 'user:nobody'), { nil: undefined }),
  sinceMs: fc.option(fc.integer({ min: -1, max: 6 }).map((s) => Number(BASE_NS / 1_000_000n) + s * 1000), { nil: undefined }),
  untilMs: fc.option(fc.integer({ min: 0, max: 6 }).map((s) => Number(BASE_NS / 1_000_000n) + s * 1000 + 500), { nil: undefined }),
}, { requiredKeys: [] });

/** One stored event and its place in the time order. */
interface Placed { event: NormalizedEvent; place: EventCursor }

describe('the read side evidence index (postings by second)', () => {
  let dir: ReturnType<typeof tempDir>;
  let env: RootDatabase;
  let dbs: Record<string, Database<Uint8Array, IndexKey>>;
  before(() => {
    dir = tempDir();
    env = open({ path: join(dir.path, 'read'), maxDbs: 4, compression: false });
    dbs = Object.fromEntries([EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim].map((name) => [name, env.openDB<Uint8Array, IndexKey>({ name, encoding: 'binary' })]));
  });
  after(async () => {
    await env.close();
    dir.cleanup();
  });

  /** Folds the generated records into an empty index; returns the read models over it and every event placed. */
  function fold(generated: Array<Array<{ time: string; category: string; class: string; adapter: string; keys: string[] }>>): { models: ReadModels; placed: Placed[] } {
    const records = new Map<number, LogRecord>();
    const placed: Placed[] = [];
    env.transactionSync(() => {
      for (const db of Object.values(dbs)) db.clearSync();
      generated.forEach((events, r) => {
        const seq = r + 3;
        const data = {
          events: events.map((e, i) => normalizedEvent({
            id: `e-${seq}-${i}`, time: e.time, category: e.category as NormalizedEvent['category'], class: e.class,
            source: { adapter: e.adapter, instance: 'x', recordId: `${seq}-${i}` }, entityKeys: e.keys,
          })),
        };
        const record: LogRecord = { seq, at: '2026-11-22T00:00:00Z', type: 'EventsIngested', data, prev: '' };
        records.set(seq, record);
        data.events.forEach((event, i) => placed.push({ event, place: [eventTimeMs(event), seq, i] }));
        evidenceReadIndex.apply(record, { get: () => undefined }, {
          put: (db, key, value) => { dbs[db]!.putSync(key as never, value as Uint8Array); },
          remove: () => assert.fail('the index never removes'),
        });
      });
    });
    const models = { db: (name: string) => dbs[name]!, record: (seq: number) => records.get(seq) } as unknown as ReadModels;
    return { models, placed };
  }

  /** Every event id `read` hands out, chunk after chunk from where the last stopped; the walk must end within `bound` chunks. */
  function drain(bound: number, read: (after: EventCursor | undefined) => { events: NormalizedEvent[]; next: EventCursor | undefined }): string[] {
    const seen: string[] = [];
    let after: EventCursor | undefined;
    for (let chunks = 0; ; chunks++) {
      assert.ok(chunks <= bound, 'reading ends');
      const chunk = read(after);
      seen.push(...chunk.events.map((e) => e.id));
      if (chunk.next === undefined) return seen;
      after = chunk.next;
    }
  }

  /** Every event `listEvents` lists, page after page. */
  const listAll = (models: ReadModels, placed: readonly Placed[], filter: EventFilter, limit: number, budget: number) => drain(placed.length + 1, (after) => {
    const page = listEvents(models, filter, limit, after, budget);
    assert.ok(page.events.length <= limit);
    const next = page.nextCursor === null ? undefined : parseEventCursor(page.nextCursor);
    assert.ok(page.nextCursor === null || next, 'the cursor parses');
    return { events: page.events, next };
  });

  const byPlace = (a: Placed, b: Placed) => a.place[0] - b.place[0] || a.place[1] - b.place[1] || a.place[2] - b.place[2];
  const matches = (e: NormalizedEvent, f: EventFilter) => (f.category === undefined || e.category === f.category)
    && (f.class === undefined || e.class === f.class) && (f.adapter === undefined || e.source.adapter === f.adapter)
    && (f.entityKey === undefined || e.entityKeys.includes(f.entityKey));

  it('pages every matching event exactly once, newest first, for any filter, page size and scan budget', () => {
    fc.assert(fc.property(recordsArb, filterArb, fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 30 }), (generated, filter, limit, budget) => {
      const { models, placed } = fold(generated);
      const expected = placed.filter((p) => matches(p.event, filter)
        && (filter.sinceMs === undefined || p.place[0] >= filter.sinceMs) && (filter.untilMs === undefined || p.place[0] <= filter.untilMs))
        .sort(byPlace).reverse().map((p) => p.event.id);
      assert.deepEqual(listAll(models, placed, filter, limit, budget), expected);
    }), { numRuns: 150 });
  });

  it('reads a time range oldest first in chunks, for any chunk size', () => {
    fc.assert(fc.property(recordsArb, filterArb, fc.integer({ min: 1, max: 9 }), (generated, filter, max) => {
      const { models, placed } = fold(generated);
      const since = filter.sinceMs ?? -1e15;
      const until = filter.untilMs ?? 1e15;
      const expected = placed.filter((p) => p.place[0] >= since && p.place[0] <= until).sort(byPlace).map((p) => p.event.id);
      const seen = drain(placed.length + 1, (after) => {
        const chunk = eventsInTimeOrder(models, since, until, max, after);
        assert.ok(chunk.events.length <= max);
        return { events: chunk.events, next: chunk.last };
      });
      assert.deepEqual(seen, expected);
    }), { numRuns: 150 });
  });

  it('pages a second that holds far more events than a page keeps in memory', () => {
    const crowded = Array.from({ length: 4 }, (_, r) => Array.from({ length: 150 }, (_, i) => ({
      time: isoFromNanos(BASE_NS + BigInt((i * 7 + r * 13) % 50) * 1_000_000n), category: i % 3 === 0 ? 'identity' : 'network',
      class: 'dns_query', adapter: 'zeek', keys: i % 2 === 0 ? ['host:web'] : [],
    })));
    const { models, placed } = fold(crowded);
    for (const [filter, limit, budget] of [[{}, 3, 7], [{ category: 'identity' }, 5, 11], [{ entityKey: 'host:web', category: 'identity' }, 2, 9]] as const) {
      const expected = placed.filter((p) => matches(p.event, filter)).sort(byPlace).reverse().map((p) => p.event.id);
      assert.deepEqual(listAll(models, placed, filter, limit, budget), expected, JSON.stringify(filter));
    }
  });

  it('decodes each record once for a second in which the events of many records interleave', () => {
    // 200 senders' records, their events spread over the same second in turn: a record cache of a
    // few dozen records would decode one for nearly every event.
    const interleaved = Array.from({ length: 200 }, (_, r) => Array.from({ length: 5 }, (_, i) => ({
      time: isoFromNanos(BASE_NS + BigInt(i * 200 + r) * 1_000_000n), category: 'network', class: 'dns_query', adapter: 'zeek', keys: [],
    })));
    const { models, placed } = fold(interleaved);
    let decoded = 0;
    const counting = { ...models, record: (seq: number) => { decoded++; return models.record(seq); } } as ReadModels;
    const expected = placed.slice().sort(byPlace).reverse().map((p) => p.event.id);
    assert.deepEqual(listAll(counting, placed, {}, 1000, 20_000), expected);
    assert.equal(decoded, 200, 'one decode per record');
    decoded = 0;
    const oldestFirst = eventsInTimeOrder(counting, -1e15, 1e15, 1000);
    assert.deepEqual(oldestFirst.events.map((e) => e.id), expected.slice().reverse());
    assert.equal(decoded, 200, 'one decode per record, oldest first too');
  });

  it('writes one entry per record, value and second, not one per event', () => {
    const time = '2026-11-22T10:00:00.5Z';
    const { models } = fold([Array.from({ length: 12 }, () => ({ time, category: 'network', class: 'dns_query', adapter: 'zeek', keys: ['host:web', 'host:web'] }))]);
    const count = (name: string) => [...models.db(name).getKeys({})].length;
    assert.equal(count(EVIDENCE_DBS.byTime), 1);
    assert.equal(count(EVIDENCE_DBS.byDim), 4, 'category, class, adapter and the one entity key');
  });

  it('refuses cursors of another shape', () => {
    assert.equal(parseEventCursor(Buffer.from(JSON.stringify([1, 'evt-1'])).toString('base64url')), undefined);
    assert.equal(parseEventCursor(Buffer.from(JSON.stringify([1, 2, null])).toString('base64url')), undefined);
    assert.deepEqual(parseEventCursor(Buffer.from(JSON.stringify([1.5, 2, 3])).toString('base64url')), [1.5, 2, 3]);
  });
});
