import { join } from 'node:path';
import { availableParallelism } from 'node:os';
import { openLmdbStore } from '../src/log/lmdb-store.js';
import { openLmdbLog } from '../src/log/lmdb-log.js';
import { decodeRecord, encodeRecord } from '../src/log/record.js';
import { openInstanceStore } from '../src/cli/instance/open.js';
import { RecordType } from '../src/events/record-types.js';
import type { LogRecord } from '../src/kernel/record.js';
import { createGraphProjection } from '../src/projections/graph.js';
import {
  benchConfig,
  cli,
  load,
  peakRssMiB,
  scratch,
  startChild,
  stopChild,
  token,
  vigil,
  type LoadResult,
} from './harness.js';
import { benchEvent, eventBodies } from './events.js';
import { rssNowMiB } from './overload.js';
import { coreBalance } from './machine.js';

/** One measured figure. */
export interface Figure {
  name: string;
  value: number;
  unit: string;
  note?: string;
}

/** (a) raw durable LMDB append of pre-encoded records, 1000 per transaction. */
async function rawAppend(figures: Figure[]): Promise<void> {
  const dir = scratch('raw');
  const store = openLmdbStore(join(dir, 'store'));
  const db = store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
  const records = Array.from({ length: 1000 }, (_, i) =>
    encodeRecord({
      seq: i + 1,
      at: '2026-11-22T00:00:00Z',
      type: RecordType.EventsIngested,
      data: { events: [benchEvent(`r${i}`, i)] },
      prev: '0'.repeat(64),
    }),
  );
  let seq = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 5000) {
    await store.root.transaction(() => {
      for (const r of records) db.putSync(++seq, r);
    });
    await store.root.flushed;
  }
  const s = (performance.now() - t0) / 1000;
  figures.push({
    name: 'a. raw durable LMDB append (pre-encoded, 1000/txn)',
    value: Math.round(seq / s),
    unit: 'records/s',
    note: `${records[0]!.byteLength} B each`,
  });
  await store.close();
}

/**
 * Rounds of each ratio's two sides, alternating ((a') then (b); the raw read then replay): a
 * side takes a second or two, and alternating spreads what the machine does meanwhile over both.
 */
const ROUNDS = 3;

/** The sum of `f` over the rounds. */
const sumOf = <T>(runs: readonly T[], f: (r: T) => number): number => runs.reduce((t, r) => t + f(r), 0);

/** The loads of one kind taken together: their events over their summed time, the median round's latencies. */
function pooledLoad(runs: readonly LoadResult[]): LoadResult {
  const median = (f: (r: LoadResult) => number) => runs.map(f).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  const seconds = sumOf(runs, (r) => r.seconds);
  return {
    requests: sumOf(runs, (r) => r.requests),
    failures: sumOf(runs, (r) => r.failures),
    seconds,
    eventsPerSecond: sumOf(runs, (r) => r.eventsPerSecond * r.seconds) / seconds,
    p50ms: median((r) => r.p50ms),
    p99ms: median((r) => r.p99ms),
  };
}

/** (a') and (b): the bare stack ceiling and the real route, same bodies, same load, each on a fresh store a round. */
async function httpIngest(figures: Figure[], report: Record<string, unknown>): Promise<string> {
  const bodies = eventBodies('b', 160, 1000);
  const bares: LoadResult[] = [];
  const reals: LoadResult[] = [];
  let rss = 0;
  let config = '';
  for (let round = 0; round < ROUNDS; round++) {
    const ceilingDir = scratch('ceiling');
    const ceiling = await startChild(
      [join(cli, '..', '..', '..', 'bench', 'ceiling.js'), join(ceilingDir, 'store')],
      ceilingDir,
    );
    bares.push(load(ceiling.url, bodies, 1000));
    await stopChild(ceiling.proc);

    const dir = scratch('serve');
    config = benchConfig(dir);
    const t = token(config, dir, 'bench', 'ingestor');
    const serve = await startChild([cli, 'serve', '--config', config], dir);
    reals.push(load(`${serve.url}/api/v1/events`, bodies, 1000, { token: t }));
    rss = Math.max(rss, peakRssMiB(serve.proc.pid!));
    await stopChild(serve.proc);
  }
  const bare = pooledLoad(bares);
  const real = pooledLoad(reals);
  const perRound = reals
    .map((r, i) => `${Math.round((r.eventsPerSecond / bares[i]!.eventsPerSecond) * 1000) / 10}`)
    .join(' / ');
  const rates = (runs: readonly LoadResult[]) =>
    runs.map((r) => Math.round(r.eventsPerSecond).toLocaleString('en')).join(' / ');
  figures.push({
    name: "a'. stack ceiling: bare node-server route, JSON parse + durable append",
    value: Math.round(bare.eventsPerSecond),
    unit: 'events/s',
    note:
      `${ROUNDS} rounds pooled (${rates(bares)}); median p50 ${bare.p50ms.toFixed(1)} ms, p99 ` +
      `${bare.p99ms.toFixed(1)} ms`,
  });
  figures.push({
    name: 'b. POST /api/v1/events, 1000-event batches, 4 connections',
    value: Math.round(real.eventsPerSecond),
    unit: 'events/s',
    note:
      `${ROUNDS} rounds pooled (${rates(reals)}); median p50 ${real.p50ms.toFixed(1)} ms, p99 ` +
      `${real.p99ms.toFixed(1)} ms, ${real.failures} failures`,
  });
  figures.push({
    name: "b/a'. route as a share of the stack ceiling",
    value: Math.round((real.eventsPerSecond / bare.eventsPerSecond) * 1000) / 10,
    unit: '%',
    note: `rounds alternating, pooled; per round ${perRound} %`,
  });
  figures.push({
    name: 'd. peak RSS of vigil serve during (b)',
    value: Math.round(rss),
    unit: 'MiB',
    note: 'the largest of the rounds',
  });
  report.load = { ceiling: bare, route: real, ceilingRounds: bares, routeRounds: reals };
  // (c) replays the store of the last round.
  return config;
}

/** User and system time of a `process.cpuUsage()` difference, in seconds. */
const cpuSeconds = (u: NodeJS.CpuUsage): number => (u.user + u.system) / 1e6;

/** One pass over the whole log (a raw read, or a replay): records, wall and CPU seconds. */
interface ReadRound {
  records: number;
  seconds: number;
  cpuSeconds: number;
}

/** One raw range read + decode of the whole log. */
async function rawRead(dir: string): Promise<ReadRound> {
  const store = openLmdbStore(join(dir, 'store'));
  const log = openLmdbLog(store);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let records = 0;
  for (const { bytes } of log.readRaw(1)) {
    decodeRecord(bytes);
    records++;
  }
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(process.cpuUsage(cpu0));
  await store.close();
  return { records, seconds, cpuSeconds: cpu };
}

/** (c) replay rate against a raw range read + decode of the same log, in alternating rounds. */
async function replayRate(figures: Figure[], config: string): Promise<void> {
  const dir = join(config, '..');
  const raws: ReadRound[] = [];
  const replays: ReadRound[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    raws.push(await rawRead(dir));
    replays.push(JSON.parse(vigil(['replay', '--config', config], dir)) as ReadRound);
  }
  const rawSeconds = sumOf(raws, (r) => r.seconds);
  const rawRecords = sumOf(raws, (r) => r.records);
  const rawRate = rawRecords / rawSeconds;
  const rawCpu = sumOf(raws, (r) => r.cpuSeconds);
  const replaySeconds = sumOf(replays, (r) => r.seconds);
  const replayRecords = sumOf(replays, (r) => r.records);
  const replayCpu = sumOf(replays, (r) => r.cpuSeconds);
  const replayRate = replayRecords / replaySeconds;
  const perRound = replays
    .map((r, i) => `${Math.round((r.records / r.seconds / (raws[i]!.records / raws[i]!.seconds)) * 1000) / 10}`)
    .join(' / ');
  figures.push({
    name: 'c. raw LMDB range read + decode',
    value: Math.round(rawRate),
    unit: 'records/s',
    note: `${raws[0]!.records} records, ${ROUNDS} rounds pooled; ${rawCpu.toFixed(2)} CPU s in all`,
  });
  figures.push({
    name: 'c. vigil replay (every read model from record 1)',
    value: Math.round(replayRate),
    unit: 'records/s',
    note: `${ROUNDS} rounds pooled, ${replaySeconds.toFixed(2)} s; ${replayCpu.toFixed(2)} CPU s on all its threads`,
  });
  figures.push({
    name: 'c. replay as a share of raw read',
    value: Math.round((replayRate / rawRate) * 1000) / 10,
    unit: '%',
    note: `rounds alternating, pooled; per round ${perRound} %`,
  });
  // The most the wall-clock share could be with replay's CPU time spread evenly over every core.
  const bound = (availableParallelism() * rawSeconds * (replayRecords / rawRecords)) / replayCpu;
  figures.push({
    name: 'c. replay CPU time / raw read CPU time',
    value: Math.round((replayCpu / rawCpu) * 10) / 10,
    unit: 'x',
    note:
      `with it, replay / raw read cannot pass ${Math.round(bound * 1000) / 10} % on ${availableParallelism()} ` +
      `cores`,
  });
}

/**
 * (g) the graph's fold alone (the read side's heap model), in process: 600,000 events in records of
 * 1000, once from 50,000 source addresses (it stays under its limits) and once with every event
 * from a new address (past 200,000 entities, each new one evicts the least recently seen).
 */
function graphFold(figures: Figure[]): void {
  for (const distinct of [50_000, 600_000]) {
    const p = createGraphProjection();
    let g = p.initial();
    const records: LogRecord[] = Array.from({ length: 600 }, (_, b) => ({
      seq: b + 1,
      at: '2026-11-22T12:00:00.000Z',
      type: RecordType.EventsIngested,
      prev: '',
      data: { events: Array.from({ length: 1000 }, (_, i) => benchEvent(`g-${b}-${i}`, (b * 1000 + i) % distinct)) },
    }));
    const t0 = performance.now();
    for (const r of records) g = p.evolve(g, r);
    const s = (performance.now() - t0) / 1000;
    figures.push({
      name: `g. graph fold, 600,000 events from ${distinct.toLocaleString('en')} source addresses`,
      value: Math.round(600_000 / s),
      unit: 'events/s',
      note: `${g.entities.size.toLocaleString('en')} entities kept, ${g.evicted.toLocaleString('en')} forgotten`,
    });
  }
}

/**
 * (e) start-to-ready with 1,000,000 records in the log, each one event. Restart cost follows the
 * graph's size, so it is measured twice: events from `distinct` source addresses (a realistic
 * network), and with every event from a new address (one million entities, the worst case).
 */
async function startWithMillion(figures: Figure[], distinct: number): Promise<void> {
  const dir = scratch('million');
  const config = benchConfig(dir);
  token(config, dir, 'bench', 'viewer');
  const inst = await openInstanceStore(join(dir, 'store'));
  const perBatch = 5000;
  for (let b = 0; b < 1_000_000 / perBatch; b++) {
    const events = Array.from({ length: perBatch }, (_, i) => ({
      type: RecordType.EventsIngested,
      data: { events: [benchEvent(`m-${b}-${i}`, (b * perBatch + i) % distinct)] },
    }));
    await inst.writer.record(events, { now: '2026-11-22T12:00:00.000Z' });
  }
  await inst.close();
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  const rss = rssNowMiB(serve.proc.pid!);
  await stopChild(serve.proc);
  figures.push({
    name: `e. vigil serve start to ready, 1,000,000 records, ${distinct.toLocaleString('en')} source addresses`,
    value: Math.round(serve.readyMs),
    unit: 'ms',
    note: 'process spawn to listening, with checkpoints',
  });
  figures.push({
    name: `f. RSS of vigil serve with 1,000,000 stored events, ${distinct.toLocaleString('en')} source addresses`,
    value: Math.round(rss.rss),
    unit: 'MiB',
    note: `${Math.round(rss.anon)} MiB anonymous; default graph limits (200,000 entities, 400,000 relationships)`,
  });
}

/** The foundation section of `npm run bench` (issue 2). */
export async function foundationBench(report: Record<string, unknown>): Promise<Figure[]> {
  // (b) and (c) use both cores at once: how evenly they work is measured right before them.
  const figures: Figure[] = await coreBalance('machine at the start of this section');
  await rawAppend(figures);
  const config = await httpIngest(figures, report);
  await replayRate(figures, config);
  graphFold(figures);
  await startWithMillion(figures, 50_000);
  await startWithMillion(figures, 1_000_000);
  return figures;
}
