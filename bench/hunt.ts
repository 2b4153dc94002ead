import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { openInstanceStore, type InstanceStore } from '../src/cli/instance/open.js';
import { decideIngestEvents } from '../src/commands/ingest-events.js';
import { accept } from '../src/commands/decision.js';
import type { NormalizedEvent } from '../src/events/normalized-event.js';
import { createSearcher, type Searcher } from '../src/services/hunt/searches.js';
import type { HuntAnswer } from '../src/services/hunt/scan.js';
import type { Figure } from './foundation.js';
import { median, percents, scratch } from './harness.js';

/** Events stored before the searches are timed (issue 61: 1,000,000). */
const EVENTS = 1_000_000;
const PER_RECORD = 5000;
const START = Date.parse('2026-11-15T00:00:00.000Z');
/** The stored events span a week: one every 0.6 s. */
const STEP_MS = 604.8;
const HOSTS = 500;
const CLASSES = ['network_connection', 'dns_query', 'authentication', 'process_start', 'file_write', 'http_request'];
const INDEX_RUNS = 40;
const INGEST_BATCHES = 20;
const INGEST_ROUNDS = 4;
/** A search's nice, as `vigil serve` starts its searcher (limits.readSideNice). */
const NICE = 10;

/** The k-th stored event: hosts, users and classes in turn, one event in 100,000 a needle. */
function event(k: number, at = START + k * STEP_MS): NormalizedEvent {
  const host = `h-${k % HOSTS}`;
  const user = `u-${k % 2000}`;
  return {
    schemaVersion: 1,
    id: `hunt-${k}`,
    category: k % 3 === 0 ? 'identity' : 'network',
    class: CLASSES[k % CLASSES.length]!,
    activity: 'bench',
    outcome: k % 7 === 0 ? 'failure' : 'success',
    time: new Date(at).toISOString(),
    ingestedAt: new Date(at + 1000).toISOString(),
    source: { adapter: 'bench', instance: 'hunt', recordId: `r-${k}` },
    entityKeys: [`host:${host}`, `user:${user}`, `ip:10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`],
    actor: { user, host },
    sourceEndpoint: { ip: `10.${(k >> 16) & 255}.${(k >> 8) & 255}.${k & 255}`, port: 40000 + (k % 20000) },
    destinationEndpoint: { ip: '10.0.0.53', port: 53 },
    attributes: { note: k % 100_000 === 7 ? 'needle' : 'hay', n: k % 1000, path: `/srv/app/${k % 97}/index.html` },
  };
}

async function fill(inst: InstanceStore): Promise<void> {
  for (let from = 0; from < EVENTS; from += PER_RECORD) {
    const events = Array.from({ length: PER_RECORD }, (_, i) => event(from + i));
    await inst.pipeline.dispatch({
      decide: () => accept([{ type: 'EventsIngested', data: { events } }], null),
      ctx: { now: new Date().toISOString() },
    });
  }
  await inst.readYourWrites(600_000);
}

/** The baseline: the store's records read and decoded in a worker thread (hunt-raw-worker.ts), events a second. */
function rawRate(storePath: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const w = new Worker(new URL('./hunt-raw-worker.js', import.meta.url), { workerData: { storePath } });
    w.once('message', (m: { events: number; ms: number }) => resolve(m.events / (m.ms / 1000)));
    w.once('error', reject);
  });
}

const job = (sinceMs: number, untilMs: number) => ({
  sinceMs,
  untilMs,
  limit: 100,
  maxEvents: 10_000_000,
  deadline: Date.now() + 600_000,
});

async function timed(s: Searcher, query: string, sinceMs: number, untilMs: number) {
  const t0 = performance.now();
  const a: HuntAnswer = await s.search(query, job(sinceMs, untilMs));
  return { ms: performance.now() - t0, answer: a };
}

/** Wall-clock ingest rate (events a second) of `batches` fresh batches of 1,000 events, each read back. */
async function ingestRate(inst: InstanceStore, from: number, batches: number): Promise<number> {
  const t0 = performance.now();
  for (let b = 0; b < batches; b++) {
    const events = Array.from({ length: 1000 }, (_, i) => event(from + b * 1000 + i, Date.now()));
    await inst.pipeline.dispatch({
      decide: (m) => decideIngestEvents(m, events),
      ctx: { now: new Date().toISOString() },
    });
    await inst.readYourWrites(60_000);
  }
  return (batches * 1000) / ((performance.now() - t0) / 1000);
}

/**
 * Issue 61's figures over 1,000,000 stored events: an index-served hunt (entity key and a day) p95; a full scan with
 * a field predicate, events a second as a share of reading and decoding the same store's records alone; and ingest
 * while full scans run one after another, as a share of ingest alone (rounds in turn, alone then during).
 */
export async function huntBench(): Promise<Figure[]> {
  const path = join(scratch('hunt'), 'store');
  const inst = await openInstanceStore(path);
  const t0 = performance.now();
  await fill(inst);
  const fillS = Math.round(performance.now() - t0) / 1000;
  const search = createSearcher({ storePath: path, nice: NICE });
  const end = START + EVENTS * STEP_MS;
  const day = 86_400_000;
  await timed(search, '*', end - day, end); // the worker started and warm
  const index: number[] = [];
  let found = 0;
  for (let i = 0; i < INDEX_RUNS; i++) {
    const since = START + (i % 6) * day;
    const r = await timed(search, `entityKeys:"host:h-${(i * 37) % HOSTS}"`, since, since + day);
    index.push(r.ms);
    if (r.answer.output === 'events') found += r.answer.events.length;
  }
  index.sort((a, b) => a - b);
  // Scan and baseline in turn, so whatever else the machine does weighs on both alike; the share is per pair.
  const scans: number[] = [];
  const raws: number[] = [];
  let needles = -1;
  for (let i = 0; i < 3; i++) {
    const r = await timed(search, 'attributes.note:needle | stats count()', START, end);
    scans.push(r.answer.scanned / (r.ms / 1000));
    if (r.answer.output === 'rows') needles = Number(r.answer.rows[0]?.[0] ?? 0);
    raws.push(await rawRate(path));
  }
  const alone: number[] = [];
  const during: number[] = [];
  // A round not counted first: the writer's and the read side's code warm on fresh events.
  let next = EVENTS;
  await ingestRate(inst, next, INGEST_BATCHES);
  next += INGEST_BATCHES * 1000;
  for (let round = 0; round < INGEST_ROUNDS; round++) {
    alone.push(await ingestRate(inst, next, INGEST_BATCHES));
    next += INGEST_BATCHES * 1000;
    let scanning = true;
    const loop = (async () => {
      while (scanning) await search.search('attributes.n:999 | stats count() by class', job(START, end));
    })();
    during.push(await ingestRate(inst, next, INGEST_BATCHES));
    next += INGEST_BATCHES * 1000;
    scanning = false;
    await loop;
  }
  await search.stop();
  await inst.close();
  const shares = during.map((d, i) => d / alone[i]!);
  const scan = median(scans);
  const raw = median(raws);
  const scanShares = scans.map((x, i) => x / raws[i]!);
  return [
    { name: `store ${EVENTS.toLocaleString('en')} events (${EVENTS / PER_RECORD} records)`, value: fillS, unit: 's' },
    {
      name: '  hunt served by an index (entity key + a day), p95',
      value: Math.round(index[Math.floor(index.length * 0.95)]! * 10) / 10,
      unit: 'ms',
      note:
        `p50 ${Math.round(index[index.length >> 1]! * 10) / 10} ms over ${INDEX_RUNS} hosts; ` +
        `${found} events; target < 100 ms`,
    },
    {
      name: '  full scan with a field predicate',
      value: Math.round(scan),
      unit: 'events/s',
      note: `median of 3; ${needles} needles found`,
    },
    {
      name: '  raw LMDB read + decode of the same store',
      value: Math.round(raw),
      unit: 'events/s',
      note: 'median of 3',
    },
    {
      name: '  full scan / raw read + decode',
      value: Math.round(median(scanShares) * 1000) / 10,
      unit: '%',
      note: `median of pairs ${percents(scanShares)}; target >= 50 %`,
    },
    {
      name: '  ingest while full scans run / ingest alone',
      value: Math.round(median(shares) * 1000) / 10,
      unit: '%',
      note: `median of rounds ${percents(shares)}; alone ${alone.map(Math.round).join(' / ')} events/s; target >= 80 %`,
    },
  ];
}
