import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { decideIngestEvents } from '../src/commands/ingest-events.js';
import { detectIn } from '../src/alerting/detection-step.js';
import type { NormalizedEvent } from '../src/events/normalized-event.js';
import { DEFAULT_DETECTION, openInstanceStore } from '../src/instance/open.js';
import { startCheckpointer } from '../src/log/checkpointer.js';
import { expireSegments } from '../src/retention/expire.js';
import { RetentionSchema } from '../src/retention/settings.js';
import { benchEvent } from './events.js';
import type { Figure } from './foundation.js';
import { scratch } from './harness.js';

const DAYS = 30;
const HOURS = DAYS * 24;
/** Records (ingest requests) per simulated hour, and events in each: a steady rate. */
const RECORDS_PER_HOUR = 80;
const EVENTS_PER_RECORD = 10;
/** About one simulated day of records a segment. */
const SEGMENT = 2048;
/** Expiry is checked every simulated 6 hours, as `vigil serve` does on its timer, without waiting for it. */
const CHECK_EVERY_HOURS = 6;
const T0 = Date.parse('2026-10-01T00:00:00Z');

interface MonthRun {
  /** data.mdb bytes at the end of each simulated day. */
  readonly sizeByDay: number[];
  /** Events/s ingested over days 8..30 (wall clock, expiry included when on). */
  readonly laterRate: number;
  /** Events/s ingested by the simulated hours that ran while an expiry was in progress. */
  readonly duringRate: number;
  readonly archives: number;
  readonly archiveBytes: number;
  readonly expiryMs: number[];
}

/** Ingests a simulated month at a steady rate, with 7-day retention of evidence when `retain`. */
async function month(retain: boolean): Promise<MonthRun> {
  const dir = scratch(retain ? 'retain' : 'keep');
  const storePath = join(dir, 'store');
  const archiveDir = join(dir, 'archive');
  const inst = await openInstanceStore(storePath);
  const cp = await startCheckpointer(inst.store, inst.log, { name: 'bench.log/r', seed: new Uint8Array(32).fill(5) }, { everyRecords: 10_000, everySeconds: 86_400, witnesses: [] });
  const settings = v.parse(RetentionSchema, { enabled: retain, evidenceDays: 7, segmentRecords: SEGMENT });
  const sizeByDay: number[] = [];
  const expiryMs: number[] = [];
  let expiring: Promise<unknown> | undefined;
  let n = 0;
  let laterEvents = 0;
  let laterMs = 0;
  let duringEvents = 0;
  let duringMs = 0;
  for (let hour = 0; hour < HOURS; hour++) {
    const now = new Date(T0 + hour * 3_600_000).toISOString();
    if (retain && hour % CHECK_EVERY_HOURS === 0 && !expiring) {
      const t0 = performance.now();
      expiring = expireSegments({ log: inst.log, writer: inst.writer, carried: inst.carried, checkpoints: cp, origin: 'bench.log/r', settings, archiveDir, storePath }, { now })
        .then((done) => { if (done.length > 0) expiryMs.push(performance.now() - t0); })
        .finally(() => { expiring = undefined; });
    }
    const t0 = performance.now();
    const during = expiring !== undefined;
    const ctx = { now };
    await Promise.all(Array.from({ length: RECORDS_PER_HOUR }, () => {
      const events = Array.from({ length: EVENTS_PER_RECORD }, () => { n++; return benchEvent(`m${n}`, n) as unknown as NormalizedEvent; });
      return inst.writer.execute((m) => detectIn(m, decideIngestEvents(m, events), [], ctx, DEFAULT_DETECTION), ctx);
    }));
    if (hour >= 7 * 24) { laterMs += performance.now() - t0; laterEvents += RECORDS_PER_HOUR * EVENTS_PER_RECORD; }
    if (during) { duringMs += performance.now() - t0; duringEvents += RECORDS_PER_HOUR * EVENTS_PER_RECORD; }
    if (hour % 24 === 23) sizeByDay.push(statSync(join(storePath, 'data.mdb')).size);
  }
  await expiring;
  await cp.stop();
  await inst.close();
  const files = retain ? readdirSync(archiveDir) : [];
  return {
    sizeByDay, laterRate: laterEvents / (laterMs / 1000), duringRate: duringEvents / Math.max(duringMs / 1000, 1e-9), archives: files.length,
    archiveBytes: files.reduce((s, f) => s + statSync(join(archiveDir, f)).size, 0), expiryMs,
  };
}

const mib = (b: number) => Math.round(b / 1048576 * 10) / 10;

/**
 * A simulated month at a steady rate with 7-day retention of evidence: the store's size by day
 * (it should stop growing once the first week expires, LMDB reusing freed pages) and the ingest
 * rate of days 8..30 with expiry running beside it, against the same month without retention.
 */
export async function retentionBench(): Promise<Figure[]> {
  const keep = await month(false);
  const retain = await month(true);
  const days = [7, 10, 14, 21, 30];
  const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? 0;
  return [
    ...days.map((d) => ({ name: `store size at day ${d}, 7-day retention`, value: mib(retain.sizeByDay[d - 1]!), unit: 'MiB', note: `without retention ${mib(keep.sizeByDay[d - 1]!)} MiB` })),
    { name: 'store growth days 14..30, 7-day retention', value: mib(retain.sizeByDay[29]! - retain.sizeByDay[13]!), unit: 'MiB', note: `without retention ${mib(keep.sizeByDay[29]! - keep.sizeByDay[13]!)} MiB` },
    { name: 'archives written', value: retain.archives, unit: 'files', note: `${mib(retain.archiveBytes)} MiB` },
    { name: 'one expiry run (archive, cut, refold), median', value: Math.round(median(retain.expiryMs)), unit: 'ms', note: `${SEGMENT} records a segment` },
    { name: 'ingest days 8..30 without retention', value: Math.round(keep.laterRate), unit: 'events/s', note: `${RECORDS_PER_HOUR} records of ${EVENTS_PER_RECORD} events a simulated hour` },
    { name: 'ingest days 8..30 with expiry running', value: Math.round(retain.laterRate), unit: 'events/s' },
    { name: 'ingest throughput change over days 8..30', value: Math.round((retain.laterRate / keep.laterRate - 1) * 1000) / 10, unit: '%', note: 'a simulated day takes about a second: a day of expiry work shares it' },
    { name: 'ingest while an expiry run is in progress', value: Math.round(retain.duringRate), unit: 'events/s' },
    { name: 'ingest change while an expiry run is in progress', value: Math.round((retain.duringRate / keep.laterRate - 1) * 1000) / 10, unit: '%', note: 'target: no more than 10 % lower' },
  ];
}
