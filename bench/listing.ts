import { join } from 'node:path';
import { open } from 'lmdb';
import type { Database } from 'lmdb';
import { EVIDENCE_DBS, evidenceReadIndex } from '../src/projections/evidence.js';
import { listEvents, parseEventCursor, type EventCursor } from '../src/projections/evidence-query.js';
import type { ReadModels } from '../src/projections/runtime.js';
import type { IndexKey } from '../src/projections/types.js';
import { decodeRecord, encodeRecord } from '../src/log/record.js';
import { type LogRecord } from '../src/kernel/record.js';
import { benchEvent } from './events.js';
import type { Figure } from './foundation.js';
import { scratch, timeRuns } from './harness.js';

const RUNS = 9;

/**
 * Folds `records` into a fresh read-side evidence index in `dir`; returns read models over it that decode a record from
 * its stored bytes each time one is asked for, as the log does.
 */
function indexOf(dir: string, records: LogRecord[]): { models: ReadModels; close: () => Promise<void> } {
  const env = open({ path: join(dir, 'read'), maxDbs: 4, compression: false, noSync: true });
  const dbs = Object.fromEntries(
    [EVIDENCE_DBS.byTime, EVIDENCE_DBS.byDim].map((name) => [
      name,
      env.openDB<Uint8Array, IndexKey>({ name, encoding: 'binary' }),
    ]),
  ) as Record<string, Database<Uint8Array, IndexKey>>;
  env.transactionSync(() => {
    for (const r of records)
      evidenceReadIndex.apply(
        r,
        { get: () => undefined },
        {
          put: (db, key, value) => {
            dbs[db]!.putSync(key as never, value as Uint8Array);
          },
          remove: () => undefined,
        },
      );
  });
  const bytes = new Map(records.map((r) => [r.seq, encodeRecord(r)]));
  const models = {
    db: (name: string) => dbs[name]!,
    record: (seq: number) => {
      const b = bytes.get(seq);
      return b && decodeRecord(b);
    },
  } as unknown as ReadModels;
  return { models, close: () => env.close() };
}

/** Records of `perRecord` bench events each, every event's time given by `time(record, position)`. */
function records(n: number, perRecord: number, time: (r: number, i: number) => string): LogRecord[] {
  return Array.from({ length: n }, (_, r) => ({
    seq: r + 1,
    at: '2026-11-22T12:00:00.000Z',
    type: 'EventsIngested',
    prev: '',
    data: {
      events: Array.from({ length: perRecord }, (_, i) => ({
        ...benchEvent(`l-${r}-${i}`, r * perRecord + i),
        time: time(r, i),
      })),
    },
  }));
}

/** The figure of `RUNS` timings of a page: the median, and the slowest in its note. */
function pageFigure(name: string, page: () => unknown): Figure {
  const t = timeRuns(RUNS, page);
  return { name, value: Math.round(t.p50), unit: 'ms', note: `slowest of ${RUNS}: ${Math.round(t.max)} ms` };
}

/**
 * Event listing (`GET /api/v1/events`'s query, in process, over the read side's index in LMDB and records
 * decoded from their stored bytes) in
 * the two shapes that used to cost time out of proportion: a million events that share one second
 * (one timestamp), and a second in which the events of many records interleave.
 */
export async function listingBench(): Promise<Figure[]> {
  const figures: Figure[] = [];

  const crowded = indexOf(
    scratch('listing-crowded'),
    records(1000, 1000, () => '2026-11-22T10:00:00.000Z'),
  );
  let after: EventCursor | undefined;
  for (let p = 0; p < 5; p++) after = parseEventCursor(listEvents(crowded.models, {}, 100, after).nextCursor!);
  figures.push(
    pageFigure('listing: first page of 100, 1,000,000 events in one second', () => listEvents(crowded.models, {}, 100)),
  );
  figures.push(
    pageFigure('listing: sixth page of 100 (cursor), same second', () => listEvents(crowded.models, {}, 100, after)),
  );
  figures.push(
    pageFigure('listing: sixth page of 100 by category, same second', () =>
      listEvents(crowded.models, { category: 'network' }, 100, after),
    ),
  );
  await crowded.close();

  // 500 senders' records of 40 events, their events taking turns over the same few seconds.
  const mixed = indexOf(
    scratch('listing-interleaved'),
    records(500, 40, (r, i) => new Date(Date.UTC(2026, 10, 22, 10) + i * 100 + r * 0.1).toISOString()),
  );
  let decoded = 0;
  const counting = {
    ...mixed.models,
    record: (seq: number) => {
      decoded++;
      return mixed.models.record(seq);
    },
  } as ReadModels;
  const figure = pageFigure('listing: page of 1,000 where 500 records interleave', () =>
    listEvents(counting, {}, 1000),
  );
  figures.push({ ...figure, note: `${decoded / RUNS} record decodes a page; ${figure.note}` });
  await mixed.close();
  return figures;
}
