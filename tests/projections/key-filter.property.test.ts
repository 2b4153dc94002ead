import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { Database } from 'lmdb';
import { openLmdbStore, type LmdbStore } from '../../src/log/lmdb-store.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { createKeyFilter } from '../../src/projections/key-filter.js';
import { createIndexWrites, type IndexWrites, type Op } from '../../src/projections/index-writes.js';
import type { IndexKey, IndexProjection } from '../../src/projections/types.js';
import { tempDir } from '../helpers/temp.js';

/** An id as clients send them: a UUID. */
const uuid = (i: number, salt: number) => {
  const h = (n: number) => (Math.imul(n ^ salt, 0x9e3779b1) >>> 0).toString(16).padStart(8, '0');
  return `${h(i)}-${h(i * 7 + 1).slice(0, 4)}-4${h(i * 13 + 2).slice(0, 3)}-8${h(i * 17 + 3).slice(0, 3)}-${h(i * 19 + 4)}${h(i * 23 + 5).slice(0, 4)}`;
};

describe('the key filter', () => {
  it('never rules out a key it was given, however many past its capacity', () => {
    fc.assert(fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 40 }), { maxLength: 300 }), fc.integer({ min: 1, max: 64 }), (keys, capacity) => {
      const f = createKeyFilter(capacity);
      for (const k of keys) f.add(k);
      for (const k of keys) assert.equal(f.mayHave(k), true, k);
      assert.equal(f.count, keys.length);
    }), { numRuns: 500 });
  });

  it('rules out nearly every key it was not given, at its capacity', () => {
    const f = createKeyFilter(20_000);
    for (let i = 0; i < 20_000; i++) f.add(uuid(i, 1));
    let maybe = 0;
    for (let i = 0; i < 20_000; i++) if (f.mayHave(uuid(i, 2))) maybe++;
    // About 0.7 % at 12 bits a key and four probes; a weak hash would leave far more.
    assert.ok(maybe < 400, `${maybe} of 20,000 keys never added may be there`);
  });
});

/** A record of the test index: keys put and removed. */
const recordOf = (seq: number, puts: readonly string[], removes: readonly string[]): LogRecord => ({ seq, at: '2026-01-01T00:00:00.000Z', type: 'T', data: { puts, removes }, prev: '' });

const testIndex: IndexProjection = {
  name: 'test', version: 1, dbs: ['t'], readDbs: ['t'], binaryDbs: ['t'], filteredDbs: ['t'],
  apply(record, _read, write) {
    const { puts, removes } = record.data as { puts: string[]; removes: string[] };
    for (const k of puts) write.put('t', k, Buffer.from(String(record.seq)));
    for (const k of removes) write.remove('t', k);
  },
};

type Step =
  | { t: 'stage'; puts: string[]; removes: string[] }
  | { t: 'commit'; warmBetween: boolean }
  | { t: 'bulk'; n: number }
  | { t: 'warm' }
  | { t: 'reopen' }
  | { t: 'rebuild' };

/** Keys spread over the order a filter's scan reads a database in (before, among and after the bulk UUIDs). */
const KEYS = Array.from({ length: 12 }, (_, i) => `${'08f'[i % 3]}-key-${i}`);
const key = fc.constantFrom(...KEYS);
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ t: fc.constant('stage' as const), puts: fc.array(key, { maxLength: 4 }), removes: fc.array(key, { maxLength: 2 }) }) },
  { weight: 4, arbitrary: fc.record({ t: fc.constant('commit' as const), warmBetween: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant('bulk' as const), n: fc.integer({ min: 1, max: 700 }) }) },
  { weight: 3, arbitrary: fc.constant({ t: 'warm' as const }) },
  { weight: 2, arbitrary: fc.constant({ t: 'reopen' as const }) },
  { weight: 1, arbitrary: fc.constant({ t: 'rebuild' as const }) },
);

describe('an index database behind a key filter', () => {
  it('reads exactly what it would read without one: staged and committed writes, growth, warming, reopening and rebuilding', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), fc.integer({ min: 1, max: 40 }), async (steps, filterCapacity) => {
      const dir = tempDir();
      const store: LmdbStore = openLmdbStore(dir.path);
      try {
        let ix: IndexWrites = createIndexWrites(store, [testIndex], { filterCapacity });
        const plain = store.db('t', { encoding: 'binary' }) as Database<Uint8Array, IndexKey>;
        /** The records staged and not yet committed, oldest first, with their writes. */
        const pending: Array<{ record: LogRecord; ops: Op[] }> = [];
        let seq = 0;
        let bulks = 0;
        const probes = new Set(KEYS);
        /**
         * Commits the oldest staged record. `warmBetween`: filters are filled, a slice a turn, while
         * its transaction commits (as the runtime's turns go on while LMDB's write thread commits):
         * slices may read a snapshot without its writes.
         */
        const commit = async (warmBetween = false) => {
          const { record, ops } = pending.shift()!;
          let committed = false;
          const done = store.root.transaction(() => ix.write(ops, record.seq, ['test'])).then(() => { committed = true; });
          while (warmBetween && !committed) {
            ix.warmStep(0);
            await new Promise((r) => setImmediate(r));
          }
          await done;
          ix.settle(ops);
        };
        const expected = (k: string): string | undefined => {
          for (let i = pending.length - 1; i >= 0; i--) {
            const { puts, removes } = pending[i]!.record.data as { puts: string[]; removes: string[] };
            if (removes.includes(k)) return undefined;
            if (puts.includes(k)) return String(pending[i]!.record.seq);
          }
          const v = plain.get(k);
          return v === undefined ? undefined : Buffer.from(v).toString();
        };
        for (const s of steps) {
          if (s.t === 'stage') {
            const record = recordOf(++seq, s.puts, s.removes);
            const ops: Op[] = [];
            ix.collect(record, ops);
            pending.push({ record, ops });
          } else if (s.t === 'commit') {
            if (pending.length > 0) await commit(s.warmBetween);
          } else if (s.t === 'bulk') {
            const keys = Array.from({ length: s.n }, (_, i) => uuid(i, ++bulks));
            for (const k of keys.slice(0, 3)) probes.add(k);
            const record = recordOf(++seq, keys, []);
            const ops: Op[] = [];
            ix.collect(record, ops);
            pending.push({ record, ops });
          } else if (s.t === 'warm') {
            ix.warmStep(0);
          } else if (s.t === 'reopen') {
            while (pending.length > 0) await commit();
            ix = createIndexWrites(store, [testIndex], { filterCapacity });
          } else {
            // `vigil replay`: cleared, then the committed records folded again straight into the store.
            while (pending.length > 0) await commit();
            const committed = [...plain.getRange()].map(({ key: k }) => k as string);
            await store.root.transaction(() => ix.clear(['test']));
            await store.root.transaction(() => ix.applyCommitted([recordOf(++seq, committed, [])], seq, new Set(['test'])));
          }
          for (const k of probes) {
            const got = ix.reader.get('t', k) as Uint8Array | undefined;
            assert.equal(got === undefined ? undefined : Buffer.from(got).toString(), expected(k), `${k} after ${JSON.stringify(s).slice(0, 80)}`);
          }
        }
      } finally {
        await store.close();
        dir.cleanup();
      }
    }), { numRuns: 100 });
  });

  it('answers a lookup of a key it never held without reading LMDB, once filled', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    try {
      const first = createIndexWrites(store, [testIndex]);
      const ops: Op[] = [];
      first.collect(recordOf(1, Array.from({ length: 5000 }, (_, i) => uuid(i, 1)), []), ops);
      await store.root.transaction(() => first.write(ops, 1, ['test']));
      first.settle(ops);
      // Reopened: the filter is filled from the database's keys, a slice at a time.
      const ix = createIndexWrites(store, [testIndex]);
      const db = ix.db('t');
      let reads = 0;
      const get = db.get.bind(db);
      db.get = ((k: IndexKey) => { reads++; return get(k as never); }) as typeof db.get;
      assert.equal(ix.warming(), true);
      assert.equal(ix.reader.get('t', uuid(0, 2)), undefined);
      assert.equal(reads, 1, 'before the filter is filled, a lookup reads LMDB');
      let steps = 1;
      while (!ix.warmStep(0)) steps++;
      assert.ok(steps > 1, 'filled over several turns');
      assert.equal(ix.warming(), false);
      reads = 0;
      for (let i = 0; i < 5000; i++) assert.equal(ix.reader.get('t', uuid(i, 3)), undefined);
      assert.ok(reads < 100, `${reads} of 5,000 lookups of new keys read LMDB`);
      for (let i = 0; i < 5000; i += 97) assert.notEqual(ix.reader.get('t', uuid(i, 1)), undefined);
    } finally {
      await store.close();
      dir.cleanup();
    }
  });
});
