import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { open } from 'lmdb';
import { readProjections } from '../../src/projections/all.js';
import { EVIDENCE_DBS } from '../../src/projections/evidence.js';
import { AUDIT_DB } from '../../src/projections/audit.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { READ_SIDE_DIR, openReadFold, type LogReader } from '../../src/projections/read-side/read-fold.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

/** An in-memory log that a cut can shorten, as the read side's worker sees the store. */
function memoryLog() {
  let records: LogRecord[] = [];
  let first = 1;
  let carried: LogRecord[] = [];
  const at = (seq: number) => new Date(Date.UTC(2026, 10, 1) + seq * 60_000).toISOString();
  const reader: LogReader = {
    *read(from, to) { for (const r of records) if (r.seq >= from && r.seq <= to) yield r; },
    head: () => ({ seq: records.at(-1)?.seq ?? 0 }),
    first: () => first,
    carried: () => carried,
  };
  return {
    reader,
    /** Appends one record of one event; events of the first ten records also name `host:gone`. */
    ingest(n: number) {
      for (let i = 0; i < n; i++) {
        const seq = (records.at(-1)?.seq ?? 0) + 1;
        const event = normalizedEvent({ id: `e${seq}`, time: at(seq), entityKeys: [`host:h${seq % 4}`, ...(seq <= 10 ? ['host:gone'] : []), `ip:10.0.0.${seq}`] });
        records.push({ seq, at: at(seq), type: 'EventsIngested', data: { events: [event] }, prev: '' });
      }
    },
    /** Removes the records before `firstSeq`, carrying `keep` forward, and appends the cut record. */
    cut(firstSeq: number, keep: readonly number[] = []) {
      carried = [...carried, ...records.filter((r) => keep.includes(r.seq))];
      records = records.filter((r) => r.seq >= firstSeq);
      first = firstSeq;
      const seq = records.at(-1)!.seq + 1;
      records.push({ seq, at: at(seq), type: 'LogSegmentsExpired', data: { firstSeq, prevHash: '', treeRoot: '', before: at(seq), carried: keep.length, dropped: 0, treeFrontier: '', archives: [] }, prev: '' });
    },
  };
}

const graphOf = (fold: ReturnType<typeof openReadFold>) => {
  const p = readProjections().heap[0]!;
  return p.snapshot!(fold.state(p.name));
};

/** Every entry of the read side's indexes, once its fold is closed. */
async function indexes(dir: string): Promise<unknown> {
  const env = open({ path: join(dir, READ_SIDE_DIR), maxDbs: 32, compression: false });
  const entries = (name: string, encoding: 'binary' | 'msgpack') => [...env.openDB({ name, encoding }).getRange({})].map(({ key, value }) => [key, value]);
  const out = { time: entries(EVIDENCE_DBS.byTime, 'binary'), dim: entries(EVIDENCE_DBS.byDim, 'binary'), audit: entries(AUDIT_DB, 'msgpack') };
  await env.close();
  return out;
}

/** Runs `body` with a fresh temporary directory, removed afterwards. */
async function inTempDir<T>(body: (dir: string) => Promise<T>): Promise<T> {
  const dir = tempDir();
  try {
    return await body(dir.path);
  } finally {
    dir.cleanup();
  }
}

/** What a fold holds once closed: its applied seq, its graph and its indexes. */
async function closed(fold: ReturnType<typeof openReadFold>, dir: string): Promise<{ applied: number; graph: unknown; indexes: unknown }> {
  const applied = fold.applied();
  const graph = graphOf(fold);
  await fold.close();
  return { applied, graph, indexes: await indexes(dir) };
}

/** The read side folded from scratch over the same log: what a replay from the cut gives. */
function replayed(log: LogReader, chunk?: number): Promise<{ applied: number; graph: unknown; indexes: unknown }> {
  return inTempDir((dir) => {
    const fold = openReadFold(dir, log, readProjections(), chunk ? { chunk } : {});
    fold.catchUp(log.head().seq);
    return closed(fold, dir);
  });
}

describe('the read side after a retention cut', () => {
  it('goes on folding new records while it forgets what the cut removed, then equals a replay from the cut, across a restart too', () => inTempDir(async (dir) => {
    const log = memoryLog();
    log.ingest(20);
    let fold = openReadFold(dir, log.reader, readProjections());
    fold.catchUp(20);
    log.cut(11, [4]);
    fold.catchUp(log.reader.head().seq);
    assert.equal(fold.expiring(), true, 'the cut is forgotten a step at a time, not in the fold');
    const graphKeys = () => (graphOf(fold) as { e: { key: string[] } }).e.key;
    assert.ok(graphKeys().includes('host:gone'), 'until then graph queries see the graph as it was');
    log.ingest(5);
    fold.catchUp(log.reader.head().seq);
    assert.equal(fold.applied(), 26, 'new records are folded, and read, meanwhile');
    assert.equal(fold.expiring(), true);

    // A restart before it is done starts it again.
    await fold.close();
    fold = openReadFold(dir, log.reader, readProjections());
    fold.catchUp(log.reader.head().seq);
    assert.equal(fold.expiring(), true, 'the read side knows it still holds what the cut removed');
    while (!fold.expireStep(1));
    assert.equal(fold.expiring(), false);
    assert.equal(graphKeys().includes('host:gone'), true, 'an entity a carried record names stays');
    assert.deepEqual(await closed(fold, dir), await replayed(log.reader));
  }));

  it('folds a cut log from scratch however far past its chunk the cut lies', async () => {
    const log = memoryLog();
    log.ingest(40);
    log.cut(31, [4]);
    // Chunks of 5 records: the first live record (31) lies six chunks past record 1.
    const chunked = await replayed(log.reader, 5);
    assert.equal(chunked.applied, log.reader.head().seq);
    assert.deepEqual(chunked, await replayed(log.reader));
  });

  it('drops an entity that only removed records named, and folds from the cut when it was behind the cut', () => inTempDir(async (dir) => {
    const log = memoryLog();
    log.ingest(20);
    const fold = openReadFold(dir, log.reader, readProjections());
    fold.catchUp(5);
    log.cut(11);
    fold.catchUp(log.reader.head().seq);
    assert.equal(fold.expiring(), false, 'records it never folded were removed: it folded again from the cut');
    assert.equal((graphOf(fold) as { e: { key: string[] } }).e.key.includes('host:gone'), false);
    assert.deepEqual(await closed(fold, dir), await replayed(log.reader));
  }));
});
