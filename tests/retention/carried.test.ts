import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { openCarriedIndex } from '../../src/log/retention/carried.js';
import type { CarriedRecord } from '../../src/log/retention/plan.js';
import { tempDir } from '../helpers/temp.js';

/** `n` carried records (API request audits), originally at seqs 1..n. */
const carriedRecords = (n: number, from = 1): CarriedRecord[] => Array.from({ length: n }, (_, i) => ({
  seq: from + i, hash: 'h'.repeat(64), at: '2026-10-01T00:00:00.000Z', type: 'ApiRequestAudited', data: { i: from + i }, prev: 'p'.repeat(64),
}));

describe('the carried-records index', () => {
  it('reads every carried record back in seq order, decoding each RecordsCarriedForward record once', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    try {
      // Two wrappers of 500 records each, as two cuts would leave them.
      const wrappers = new Map<number, LogRecord>([
        [900, { seq: 900, at: '2026-10-02T00:00:00.000Z', type: 'RecordsCarriedForward', data: { records: carriedRecords(500) }, prev: '' }],
        [1900, { seq: 1900, at: '2026-10-03T00:00:00.000Z', type: 'RecordsCarriedForward', data: { records: carriedRecords(500, 1000) }, prev: '' }],
      ]);
      let reads = 0;
      const carried = openCarriedIndex(store.root, (seq) => { reads++; return wrappers.get(seq); });
      await store.root.transaction(() => {
        carried.write(900, carriedRecords(500), []);
        carried.write(1900, carriedRecords(500, 1000), []);
      });
      const all = carried.all();
      assert.deepEqual(all.map((r) => r.seq), [...carriedRecords(500), ...carriedRecords(500, 1000)].map((c) => c.seq));
      assert.deepEqual(all[0], { seq: 1, at: '2026-10-01T00:00:00.000Z', type: 'ApiRequestAudited', data: { i: 1 }, prev: 'p'.repeat(64) });
      assert.equal(reads, 2, 'one read of each wrapper, not one per carried record');
      assert.deepEqual(carried.get(1001)?.data, { i: 1001 });
    } finally {
      await store.close();
      dir.cleanup();
    }
  });
});
