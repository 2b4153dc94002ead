import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import fc from 'fast-check';
import { openInstanceStore, type InstanceStore } from '../../src/cli/instance/open.js';
import { accept } from '../../src/commands/decision.js';
import { compileHunt, parseHunt, printHunt } from '../../src/detection/hunt/index.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { createSearcher, type Searcher } from '../../src/services/hunt/searches.js';
import type { HuntAnswer } from '../../src/services/hunt/scan.js';
import { tempDir } from '../helpers/temp.js';

const START = Date.parse('2026-11-20T00:00:00.000Z');
const USERS = ['alice', 'bob', 'Carol', 'dave'];
const HOSTS = ['web-1', 'web-2', 'db-1'];
const CLASSES = ['authentication', 'dns_query', 'network_connection', 'process_start'];

/** The k-th stored event: every event of its own second (no ties, so the time order is one order). */
function event(k: number): NormalizedEvent {
  const user = USERS[(k * 7) % USERS.length]!;
  const host = HOSTS[(k * 5) % HOSTS.length]!;
  return {
    schemaVersion: 1,
    id: `ev-${k}`,
    category: k % 3 === 0 ? 'identity' : 'network',
    class: CLASSES[(k * 3) % CLASSES.length]!,
    activity: k % 2 === 0 ? 'logon' : 'query',
    outcome: k % 5 === 0 ? 'failure' : 'success',
    time: new Date(START + k * 37_000).toISOString(),
    ingestedAt: new Date(START + k * 37_000 + 500).toISOString(),
    source: { adapter: k % 4 === 0 ? 'linux-journal' : 'network-monitor', instance: 'prop', recordId: `r-${k}` },
    entityKeys: [`user:${user}`, `host:${host}`, ...(k % 6 === 0 ? [`ip:10.0.0.${k % 9}`] : [])],
    actor: { user, host },
    ...(k % 6 === 0 ? { sourceEndpoint: { ip: `10.0.0.${k % 9}` } } : {}),
    attributes: { n: k % 11, query: k % 4 === 1 ? `h${k}.example.${k % 3 === 0 ? 'ru' : 'org'}` : null },
  };
}

/** The value at a dotted path of one of these events (their fields nest plainly), null when absent. */
const valueAt = (e: unknown, path: string): unknown => path.split('.').reduce<any>((o, k) => o?.[k], e) ?? null;

const STORED = Array.from({ length: 400 }, (_, k) => event(k));

const term = fc.oneof(
  fc.constantFrom(...CLASSES).map((c) => `class:${c}`),
  fc.constantFrom('identity', 'network').map((c) => `category:${c}`),
  fc.constantFrom('linux-journal', 'network-monitor').map((a) => `source.adapter:${a}`),
  fc.constantFrom(...USERS.map((u) => `user:${u}`), ...HOSTS.map((h) => `host:${h}`), 'ip:10.0.0.3').map((k) => `entityKeys:"${k}"`),
  fc.constantFrom(...USERS, 'CAROL', 'al*').map((u) => `actor.user:${u}`),
  fc.constantFrom('failure', 'success').map((o) => `outcome:${o}`),
  fc.integer({ min: 0, max: 11 }).map((n) => `attributes.n >= ${n}`),
  fc.constantFrom('*.example.ru', 'h1*', '*'),
).map((t) => (t.startsWith('*') || t.startsWith('h1') ? `attributes.query:${t}` : t));
const filter: fc.Arbitrary<string> = fc.letrec<{ f: string }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    term,
    fc.tuple(tie('f'), fc.constantFrom('and', 'or'), tie('f')).map(([a, op, b]) => `(${a}) ${op} (${b})`),
    tie('f').map((a) => `not (${a})`),
  ),
})).f;
const pipes = fc.constantFrom('', ' | sort time', ' | sort -time', ' | sort attributes.n', ' | sort -actor.user', ' | fields id, actor.user',
  ' | stats count() by actor.user', ' | stats count(), dc(actor.host) by class', ' | top 3 source.adapter', ' | timechart span=1h count() by outcome');
const range = fc.tuple(fc.integer({ min: -20, max: 400 }), fc.integer({ min: 0, max: 420 })).map(([a, b]) => ({ sinceMs: START + Math.min(a, b) * 37_000, untilMs: START + Math.max(a, b) * 37_000 }));

describe('the search engine against a brute-force filter of the same stored events', () => {
  let dir: ReturnType<typeof tempDir>;
  let inst: InstanceStore;
  let search: Searcher;
  before(async () => {
    dir = tempDir('vigil-engine-');
    const path = join(dir.path, 'store');
    inst = await openInstanceStore(path);
    // Records of various sizes, stored out of time order (a record's events are shuffled).
    for (let i = 0; i < STORED.length; ) {
      const n = 1 + ((i * 13) % 37);
      const events = STORED.slice(i, i + n).reverse();
      await inst.pipeline.dispatch({ decide: () => accept([{ type: 'EventsIngested', data: { events } }], null), ctx: { now: '2026-11-22T00:00:00.000Z' } });
      i += n;
    }
    await inst.readYourWrites(60_000);
    search = createSearcher({ storePath: path, nice: 0 });
  });
  after(async () => {
    await search.stop();
    await inst.close();
    dir.cleanup();
  });

  const job = (r: { sinceMs: number; untilMs: number }, limit: number, after?: [number, number, number]) =>
    ({ ...r, limit, maxEvents: 1_000_000, deadline: Date.now() + 60_000, ...(after ? { after } : {}) });

  it('answers what the query matches among the events of the range, in its order, page after page', async () => {
    await fc.assert(fc.asyncProperty(filter, pipes, range, fc.integer({ min: 1, max: 40 }), async (f, p, r, limit) => {
      const text = `${f}${p}`;
      const parsed = parseHunt(text);
      assert.ok(parsed.ok, `${text}: ${JSON.stringify(parsed)}`);
      const hunt = compileHunt(parsed.query);
      const inRange = STORED.filter((e) => Date.parse(e.time) >= r.sinceMs && Date.parse(e.time) <= r.untilMs);
      const matching = inRange.filter((e) => hunt.matches(e));
      if (hunt.output === 'rows') {
        const agg = hunt.aggregator(r);
        for (const e of matching) agg.add(e);
        const a = await search.search(text, job(r, limit));
        assert.equal(a.output, 'rows');
        assert.deepEqual({ columns: a.columns, rows: a.rows }, agg.finish(), text);
        assert.equal(a.complete, true);
        return;
      }
      if ('needsAll' in hunt.order) {
        const a = (await search.search(text, job(r, limit))) as Extract<HuntAnswer, { output: 'events' }>;
        const { field, descending } = hunt.order;
        assert.equal(a.events.length, Math.min(limit, matching.length), text);
        const ids = new Set(matching.map((e) => e.id));
        assert.ok(a.events.every((e) => ids.has(e.id as string)), text);
        const keys = a.events.map((e) => valueAt(STORED[Number(String(e.id).slice(3))], field));
        for (let i = 1; i < keys.length; i++) {
          const [x, y] = [keys[i - 1], keys[i]];
          if (x == null || y == null) assert.ok(y == null, `${text}: events without ${field} come last`);
          else assert.ok(descending ? x >= y! : x <= y!, `${text}: ${JSON.stringify(keys)}`);
        }
        return;
      }
      // Newest first unless `sort time`; page after page with the cursor until none is left.
      const expected = [...matching].sort((x, y) => (Date.parse(y.time) - Date.parse(x.time)) * (hunt.order.descending ? 1 : -1));
      const got: Record<string, unknown>[] = [];
      let after: [number, number, number] | undefined;
      for (let page = 0; page < 500; page++) {
        const a = (await search.search(text, job(r, limit, after))) as Extract<HuntAnswer, { output: 'events' }>;
        assert.equal(a.complete, true);
        assert.ok(a.events.length <= limit);
        got.push(...a.events);
        if (!a.next) break;
        after = a.next;
      }
      assert.deepEqual(got, expected.map((e) => hunt.project(e)), `${text} ${printHunt(parsed.query)}`);
    }), { numRuns: 150 });
  });

  it('stops at its bound with complete false, and the next page goes on from there', async () => {
    const r = { sinceMs: START, untilMs: START + 400 * 37_000 };
    const first = (await search.search('*', { ...job(r, 1000), maxEvents: 50 })) as Extract<HuntAnswer, { output: 'events' }>;
    assert.equal(first.complete, false);
    assert.equal(first.scanned, 50);
    assert.equal(first.events.length, 50);
    const rest = (await search.search('*', { ...job(r, 1000), after: first.next! })) as Extract<HuntAnswer, { output: 'events' }>;
    assert.deepEqual([...first.events, ...rest.events].map((e) => e.id), [...STORED].reverse().map((e) => e.id));
    const rows = await search.search('* | stats count()', { ...job(r, 10), maxEvents: 120 });
    assert.equal(rows.complete, false);
    assert.ok(rows.output === 'rows' && rows.coveredSince !== null && rows.rows[0]![0] === 120);
  });
});
