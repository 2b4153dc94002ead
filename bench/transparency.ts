import { join } from 'node:path';
import { openLmdbStore } from '../src/log/lmdb-store.js';
import { openLmdbLog } from '../src/log/lmdb-log.js';
import { GENESIS_HASH, encodeRecord, hashBytes, type NewRecord } from '../src/log/record.js';
import { startCheckpointer } from '../src/log/checkpointer.js';
import { RecordType } from '../src/events/record-types.js';
import { benchEvent } from './events.js';
import type { Figure } from './foundation.js';
import { scratch } from './harness.js';

const BATCH = 200;
const ROUND_MS = 1500;

function batchOf(round: number): NewRecord[] {
  return Array.from({ length: BATCH }, (_, i) => ({ type: RecordType.EventsIngested, at: '2026-11-22T00:00:00.000Z', data: { events: [benchEvent(`t${round}-${i}`, i)] } }));
}

/** The log's append path without the tree: encode, chain, put, one durable transaction per batch. */
async function withoutTree(ms: number): Promise<number> {
  const store = openLmdbStore(join(scratch('notree'), 'store'));
  const db = store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
  let seq = 0;
  let prev = GENESIS_HASH;
  const t0 = performance.now();
  for (let round = 0; performance.now() - t0 < ms; round++) {
    const bytes = batchOf(round).map((r) => { const b = encodeRecord({ ...r, seq: ++seq, prev }); prev = hashBytes(b); return b; });
    const first = seq - bytes.length + 1;
    await store.root.transaction(() => store.root.transactionSync(() => { bytes.forEach((b, i) => db.putSync(first + i, b)); }));
    await store.root.flushed;
  }
  const rate = seq / ((performance.now() - t0) / 1000);
  await store.close();
  return rate;
}

/** The real log append (tree maintained in the same transaction). */
async function withTree(ms: number): Promise<number> {
  const store = openLmdbStore(join(scratch('tree'), 'store'));
  const log = openLmdbLog(store);
  const t0 = performance.now();
  for (let round = 0; performance.now() - t0 < ms; round++) await log.append(batchOf(round));
  const rate = log.head().seq / ((performance.now() - t0) / 1000);
  await log.close();
  await store.close();
  return rate;
}

/** One checkpoint (root, Ed25519 signature, durable write) after every 10,000 records, the default. */
async function checkpointCost(): Promise<number> {
  const store = openLmdbStore(join(scratch('cp'), 'store'));
  const log = openLmdbLog(store);
  const t = await startCheckpointer(store, log, { name: 'bench.log/x', seed: new Uint8Array(32).fill(3) }, { everyRecords: 1e9, everySeconds: 86_400, witnesses: [] });
  let spent = 0;
  for (let i = 0; i < 20; i++) {
    await log.append(batchOf(i));
    const t0 = performance.now();
    await t.make();
    spent += performance.now() - t0;
  }
  await t.stop();
  await log.close();
  await store.close();
  return spent / 20;
}

/** Ingest through the log with and without the Merkle tree, and the cost of checkpointing. */
export async function transparencyBench(): Promise<Figure[]> {
  const bare: number[] = [];
  const tree: number[] = [];
  // Alternating rounds, best of three each, so disk and CPU drift touch both alike.
  for (let i = 0; i < 3; i++) { bare.push(await withoutTree(ROUND_MS)); tree.push(await withTree(ROUND_MS)); }
  const [b, t] = [Math.max(...bare), Math.max(...tree)];
  const cpMs = await checkpointCost();
  const perRecordUs = 1e6 / t;
  const cpShare = ((cpMs * 1000) / 10_000) / perRecordUs * 100;
  return [
    { name: 'log append without the tree (encode, chain, durable put)', value: Math.round(b), unit: 'records/s', note: `${BATCH} records a batch` },
    { name: 'log append with the Merkle tree (the real path)', value: Math.round(t), unit: 'records/s' },
    { name: 'tree maintenance cost', value: Math.round((1 - t / b) * 1000) / 10, unit: '% of append throughput' },
    { name: 'one checkpoint (root, sign, durable write)', value: Math.round(cpMs * 100) / 100, unit: 'ms' },
    { name: 'checkpointing cost at one per 10,000 records', value: Math.round(cpShare * 100) / 100, unit: '% of append time' },
  ];
}
