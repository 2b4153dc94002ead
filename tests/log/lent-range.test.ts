import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { lentReader } from '../../src/log/lent-range.js';
import { decodeForReadSide, decodeForWriteSide, decodeLentForReadSide, decodeLentForWriteSide } from '../../src/log/evidence-fields.js';
import { leafHash } from '../../src/log/merkle.js';
import { RecordType } from '../../src/events/record-types.js';
import { tempDir } from '../helpers/temp.js';

/** `n` bytes of a pattern that tells one value from another (and where in it a byte is). */
const patterned = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed * 7) & 255);

/** Values of every size lmdb-js reads differently: inline in its read buffer, past it (grown), and in overflow pages it maps. */
const size = fc.oneof(fc.integer({ min: 0, max: 64 }), fc.integer({ min: 65, max: 8_192 }), fc.integer({ min: 8_193, max: 300_000 }), fc.constant(1_200_000));

describe('reading lent bytes (src/log/lent-range.ts)', () => {
  it('hands the decoder exactly each value, however large the one before it was, in a range and by key', async () => {
    await fc.assert(fc.asyncProperty(fc.array(size, { minLength: 1, maxLength: 12 }), async (sizes) => {
      const dir = tempDir();
      const store = openLmdbStore(dir.path);
      try {
        const db = store.db<Uint8Array, number>('values', { encoding: 'binary', keyEncoding: 'uint32' });
        const values = sizes.map((n, i) => patterned(n, i));
        await store.root.transaction(() => { values.forEach((v, i) => db.putSync(i + 1, v)); });
        // The decoder copies what it is lent, as a decoder must that keeps anything.
        const reader = lentReader(store.root, 'values', (bytes) => Uint8Array.from(bytes));
        const ranged = [...reader.range(1, values.length)];
        assert.deepEqual(ranged.map((r) => r.seq), values.map((_, i) => i + 1));
        ranged.forEach((r, i) => assert.deepEqual(r.value, values[i], `value ${i + 1} of ${sizes[i]} bytes`));
        // By key, largest first: lmdb-js's read buffer is then longer than every later value.
        const order = values.map((_, i) => i).sort((a, b) => values[b]!.length - values[a]!.length);
        for (const i of order) assert.deepEqual(reader.get(i + 1), values[i]);
        assert.equal(reader.get(values.length + 1), undefined);
      } finally {
        await store.close();
        dir.cleanup();
      }
    }), { numRuns: 25 });
  });

  it('throws what the decoder threw, ends the range, and reads on afterwards', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    try {
      const db = store.db<Uint8Array, number>('values', { encoding: 'binary', keyEncoding: 'uint32' });
      await store.root.transaction(() => { for (let k = 1; k <= 5; k++) db.putSync(k, patterned(k === 3 ? 200_000 : 10, k)); });
      const poison = new Error('not a value');
      const reader = lentReader(store.root, 'values', (bytes) => {
        if (bytes.length === 200_000) throw poison;
        return bytes.length;
      });
      const seen: number[] = [];
      assert.throws(() => { for (const { seq } of reader.range(1, 5)) seen.push(seq); }, (err) => err === poison);
      assert.deepEqual(seen, [1, 2]);
      assert.throws(() => reader.get(3), (err) => err === poison);
      // Nothing of the failure is left behind: the next reads see every value, and writes go on.
      assert.deepEqual([...reader.range(4, 5)].map((r) => r.value), [10, 10]);
      assert.equal(reader.get(2), 10);
      await store.root.transaction(() => db.putSync(6, patterned(7, 6)));
      assert.deepEqual([...reader.range(5, 6)].map((r) => r.value), [10, 7]);
    } finally {
      await store.close();
      dir.cleanup();
    }
  });

  it('decodes the log as the copying decoders do, and a whole decode keeps no view of the lent bytes', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    const log = openLmdbLog(store);
    try {
      const events = Array.from({ length: 300 }, (_, i) => ({
        schemaVersion: 1, id: `e-${i}`, category: 'network', class: 'network_connection', activity: 'traffic', outcome: 'success',
        time: `2026-11-22T00:00:${String(i % 60).padStart(2, '0')}.000Z`, ingestedAt: '2026-11-22T12:00:00.000Z', severity: 1,
        source: { adapter: 'test', instance: 'lent', recordId: `r-${i}` }, entityKeys: [`ip:10.0.${i >> 8}.${i & 255}`, 'ip:192.0.2.10'],
        sourceEndpoint: { ip: `10.0.${i >> 8}.${i & 255}`, port: 40000 + i }, destinationEndpoint: { ip: '192.0.2.10', port: 443 },
        attributes: { note: 'x'.repeat(200) },
      }));
      // A record msgpackr decodes whole, holding binary values (msgpackr returns those as views of
      // what it reads), between evidence records large enough to be read past lmdb-js's buffer.
      const binary = Uint8Array.from({ length: 64 }, (_, i) => i);
      await log.append([
        { type: RecordType.EventsIngested, at: '2026-11-22T12:00:00.000Z', data: { events } },
        { type: 'TestBinary', at: '2026-11-22T12:00:01.000Z', data: { blob: binary } },
        { type: RecordType.EventsIngested, at: '2026-11-22T12:00:02.000Z', data: { events: events.map((e) => ({ ...e, id: `f-${e.id}` })) } },
      ]);
      for (const [lent, copying] of [[decodeLentForReadSide, decodeForReadSide], [decodeLentForWriteSide, decodeForWriteSide]] as const) {
        const read = [...log.openLentReader(lent).range(1, log.head().seq)].map((r) => r.value);
        assert.deepEqual(read, [...log.readRaw(1)].map((r) => copying(r.bytes)));
        // Read after the others: lmdb-js has read the third record into the memory the second was lent in.
        assert.deepEqual([...(read[1]!.data as { blob: Uint8Array }).blob], [...binary]);
      }
      assert.deepEqual([...log.openLentReader(leafHash).range(1, log.head().seq)].map((r) => r.value), [...log.readRaw(1)].map((r) => leafHash(r.bytes)));
    } finally {
      await log.close();
      await store.close();
      dir.cleanup();
    }
  });
});
