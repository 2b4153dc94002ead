import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as v from 'valibot';
import { decideIngestEvents } from '../src/commands/ingest-events.js';
import type { NormalizedEvent } from '../src/events/normalized-event.js';
import { DEFAULT_DETECTION, openInstanceStore } from '../src/cli/instance/open.js';
import { startCheckpointer } from '../src/log/checkpointer.js';
import { embeddedHeadSigner } from '../src/log/head-signer.js';
import { expireSegments } from '../src/services/retention/expire.js';
import { RetentionSchema } from '../src/log/retention/settings.js';
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
  /**
   * Events/s ingested while an expiry was in progress: saturating, by the simulated hours that ran
   * then; steady, the events committed inside expiry runs over their wall-clock time.
   */
  readonly duringRate: number;
  readonly archives: number;
  readonly archiveBytes: number;
  readonly expiryMs: number[];
  /**
   * Milliseconds from each simulated hour's due time to its last record's commit, inside and outside expiry runs
   * (steady runs).
   */
  readonly latencyDuring: number[];
  readonly latencyOutside: number[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Ingests a simulated month with 7-day retention of evidence when `retain`. Without `rate` each
 * simulated hour's records are taken as fast as the writer commits them (a saturating load: the
 * rate is the capacity left beside expiry). With `rate` (events/s of wall clock) the load is open
 * loop: each simulated hour's records are offered at its due time whatever the answers, so the
 * figure is how much of a steady rate is still taken in while expiry runs, and how late.
 */
async function month(retain: boolean, rate?: number): Promise<MonthRun> {
  const dir = scratch(retain ? 'retain' : 'keep');
  const storePath = join(dir, 'store');
  const archiveDir = join(dir, 'archive');
  const heads = embeddedHeadSigner({ name: 'bench.log/r', seed: new Uint8Array(32).fill(5) }, join(dir, 'signer'));
  const inst = await openInstanceStore(storePath, { signer: heads });
  const cp = await startCheckpointer(inst.store, inst.log, heads, {
    everyRecords: 10_000,
    everySeconds: 86_400,
    witnesses: [],
  });
  const settings = v.parse(RetentionSchema, { enabled: retain, evidenceDays: 7, segmentRecords: SEGMENT });
  const sizeByDay: number[] = [];
  const expiryMs: number[] = [];
  let expiring: Promise<unknown> | undefined;
  let n = 0;
  let laterEvents = 0;
  let laterMs = 0;
  let duringEvents = 0;
  let duringMs = 0;
  // Steady runs: the wall-clock windows of expiry runs, and the events committed inside them.
  const windows: Array<[number, number]> = [];
  let lastCommit = 0;
  let committedDuring = 0;
  const latencyDuring: number[] = [];
  const latencyOutside: number[] = [];
  const pending = new Set<Promise<unknown>>();
  const hourMs = rate === undefined ? 0 : (RECORDS_PER_HOUR * EVENTS_PER_RECORD * 1000) / rate;
  const start = performance.now();
  let laterStart = 0;
  for (let hour = 0; hour < HOURS; hour++) {
    const now = new Date(T0 + hour * 3_600_000).toISOString();
    const due = start + hour * hourMs;
    if (rate !== undefined && due > performance.now()) await sleep(due - performance.now());
    if (hour === 7 * 24) laterStart = performance.now();
    if (retain && hour % CHECK_EVERY_HOURS === 0 && !expiring) {
      const t0 = performance.now();
      expiring = expireSegments(
        {
          log: inst.log,
          pipeline: inst.pipeline,
          carried: inst.carried,
          checkpoints: cp,
          origin: 'bench.log/r',
          settings,
          archiveDir,
          storePath,
        },
        { now },
      )
        .then((done) => {
          if (done.length > 0) expiryMs.push(performance.now() - t0);
        })
        .finally(() => {
          expiring = undefined;
          windows.push([t0, performance.now()]);
        });
    }
    const t0 = performance.now();
    const during = expiring !== undefined;
    const ctx = { now };
    const taken = Promise.all(
      Array.from({ length: RECORDS_PER_HOUR }, () => {
        const events = Array.from({ length: EVENTS_PER_RECORD }, () => {
          n++;
          return benchEvent(`m${n}`, n) as unknown as NormalizedEvent;
        });
        return inst.pipeline.dispatch({ decide: (m) => decideIngestEvents(m, events), ctx: ctx });
      }),
    );
    if (rate === undefined) {
      await taken;
      if (hour >= 7 * 24) {
        laterMs += performance.now() - t0;
        laterEvents += RECORDS_PER_HOUR * EVENTS_PER_RECORD;
      }
      if (during) {
        duringMs += performance.now() - t0;
        duringEvents += RECORDS_PER_HOUR * EVENTS_PER_RECORD;
      }
    } else {
      const p = taken
        .then(() => {
          lastCommit = performance.now();
          const late = lastCommit - due;
          if (expiring !== undefined) committedDuring += RECORDS_PER_HOUR * EVENTS_PER_RECORD;
          if (hour >= 7 * 24) laterEvents += RECORDS_PER_HOUR * EVENTS_PER_RECORD;
          (expiring !== undefined || during ? latencyDuring : latencyOutside).push(late);
        })
        .finally(() => pending.delete(p));
      pending.add(p);
    }
    if (hour % 24 === 23) sizeByDay.push(statSync(join(storePath, 'data.mdb')).size);
  }
  await Promise.all(pending);
  if (rate !== undefined) laterMs = performance.now() - laterStart;
  await expiring;
  // Only the part of each window while records were still offered or committing counts.
  if (rate !== undefined) {
    duringEvents = committedDuring;
    duringMs = windows.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(b, lastCommit) - a), 0);
  }
  await cp.stop();
  await inst.close();
  const files = retain ? readdirSync(archiveDir) : [];
  return {
    sizeByDay,
    laterRate: laterEvents / (laterMs / 1000),
    duringRate: duringEvents / Math.max(duringMs / 1000, 1e-9),
    archives: files.length,
    archiveBytes: files.reduce((s, f) => s + statSync(join(archiveDir, f)).size, 0),
    expiryMs,
    latencyDuring,
    latencyOutside,
  };
}

const mib = (b: number) => Math.round((b / 1048576) * 10) / 10;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] ?? 0;
const p99 = (a: number[]) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(a.length * 0.99))] ?? 0;
const pct = (a: number, b: number) => Math.round((a / b - 1) * 1000) / 10;

/** The shares of the saturating capacity (without retention) offered in the steady runs; the first is the headline. */
const STEADY_SHARES = [0.25, 0.5] as const;

/**
 * A simulated month with 7-day retention of evidence: the store's size by day (it should stop
 * growing once the first week expires, LMDB reusing freed pages), and ingest while expiry runs
 * beside it, against the same month without retention: at steady rates (a quarter and half of the
 * capacity the saturating month without retention measured, offered open loop), and saturating
 * (what is left of the capacity while expiry takes its share of the two cores).
 */
export async function retentionBench(): Promise<Figure[]> {
  const keep = await month(false);
  const retain = await month(true);
  const steadyRuns: Array<{ share: number; rate: number; keep: MonthRun; retain: MonthRun }> = [];
  for (const share of STEADY_SHARES) {
    const rate = Math.round(keep.laterRate * share);
    steadyRuns.push({ share, rate, keep: await month(false, rate), retain: await month(true, rate) });
  }
  const [head, ...others] = steadyRuns;
  const { rate, keep: steadyKeep, retain: steady } = head!;
  const days = [7, 10, 14, 21, 30];
  const perHour = `${RECORDS_PER_HOUR} records of ${EVENTS_PER_RECORD} events a simulated hour`;
  const share = (x: number) => `${x * 100} %`;
  const growth = (r: MonthRun) => mib(r.sizeByDay[29]! - r.sizeByDay[13]!);
  const lateness = (r: MonthRun, k: MonthRun) =>
    `p50 ${Math.round(median(r.latencyDuring))} ms; outside expiry p50 ${Math.round(median(r.latencyOutside))} / p99 ` +
    `${Math.round(p99(r.latencyOutside))} ms; without retention p50 ${Math.round(median(k.latencyOutside))} / p99 ` +
    `${Math.round(p99(k.latencyOutside))} ms`;
  return [
    {
      name: 'steady rate offered (open loop)',
      value: rate,
      unit: 'events/s',
      note: `${share(head!.share)} of the capacity without retention; ${perHour}`,
    },
    ...days.map((d) => ({
      name: `store size at day ${d}, 7-day retention, steady rate`,
      value: mib(steady.sizeByDay[d - 1]!),
      unit: 'MiB',
      note: `without retention ${mib(steadyKeep.sizeByDay[d - 1]!)} MiB`,
    })),
    {
      name: 'store growth days 14..30, 7-day retention, steady rate',
      value: growth(steady),
      unit: 'MiB',
      note: `without retention ${growth(steadyKeep)} MiB`,
    },
    {
      name: 'archives written, steady rate',
      value: steady.archives,
      unit: 'files',
      note: `${mib(steady.archiveBytes)} MiB; ${SEGMENT} records a segment`,
    },
    {
      name: 'one expiry run (archive, cut, refold), median, steady rate',
      value: Math.round(median(steady.expiryMs)),
      unit: 'ms',
      note: `${steady.expiryMs.length} runs that expired something`,
    },
    {
      name: 'steady: taken in days 8..30 without retention',
      value: Math.round(steadyKeep.laterRate),
      unit: 'events/s',
    },
    { name: 'steady: taken in days 8..30 with 7-day retention', value: Math.round(steady.laterRate), unit: 'events/s' },
    {
      name: 'steady: taken in while an expiry run is in progress',
      value: Math.round(steady.duringRate),
      unit: 'events/s',
      note: `${steady.latencyDuring.length} simulated hours inside expiry runs`,
    },
    {
      name: 'steady: change while an expiry run is in progress',
      value: pct(steady.duringRate, steadyKeep.laterRate),
      unit: '%',
      note: 'against the same steady month without retention; target: no more than 10 % lower',
    },
    {
      name: 'steady: lateness of a simulated hour inside expiry runs, p99',
      value: Math.round(p99(steady.latencyDuring)),
      unit: 'ms',
      note: lateness(steady, steadyKeep),
    },
    ...others.flatMap((o) => [
      {
        name: `at ${share(o.share)} of capacity (${o.rate} events/s): change while an expiry run is in progress`,
        value: pct(o.retain.duringRate, o.keep.laterRate),
        unit: '%',
        note:
          `lateness inside expiry runs p99 ${Math.round(p99(o.retain.latencyDuring))} ms, ` +
          `${lateness(o.retain, o.keep)}`,
      },
      {
        name: `at ${share(o.share)} of capacity: store growth days 14..30, archives written`,
        value: growth(o.retain),
        unit: 'MiB',
        note: `${o.retain.archives} archives; without retention ${growth(o.keep)} MiB`,
      },
    ]),
    {
      name: 'saturating: capacity days 8..30 without retention',
      value: Math.round(keep.laterRate),
      unit: 'events/s',
      note: perHour,
    },
    {
      name: 'saturating: capacity while an expiry run is in progress',
      value: Math.round(retain.duringRate),
      unit: 'events/s',
      note:
        `${pct(retain.duringRate, keep.laterRate)} %: expiry's work takes CPU ingest would use (a simulated day ` +
        `lasts about a second)`,
    },
    {
      name: 'saturating: store growth days 14..30, archives written',
      value: growth(retain),
      unit: 'MiB',
      note: `${retain.archives} archives; without retention ${growth(keep)} MiB`,
    },
  ];
}
