import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { openInstanceStore } from '../src/cli/instance/open.js';
import { createIndicatorIndex } from '../src/detection/intel/indicator-index.js';
import type { Indicator, IndicatorTerm } from '../src/detection/intel/types.js';
import type { NormalizedEvent } from '../src/events/normalized-event.js';
import { NORMALIZERS } from '../src/normalizers/registry.js';
import { mixedBatches } from './detection.js';
import type { Figure } from './foundation.js';
import { ingestInTurn, scratch } from './harness.js';
import { journalEntry, zeekConn } from './normalizers.js';

/**
 * Threat-intel matching (issue 60): the matcher's cost per event over a mix of normalized events with no
 * indicators and with 1,000,000 of mixed kinds, the memory they add, the time to build the index, and, as the
 * matcher is not wired into ingest yet, the share of ingest throughput it would leave: the ingest of the
 * detection bench's batches through the writer (CPU per event) against that plus the matcher's added cost.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const hex = (i: number, len: number): string => (i.toString(16) + 'a1b2c3d4e5f60718').repeat(8).slice(0, len);

/** Indicator `i` of a mix like a large feed's: addresses, domains, hashes, then URLs, ranges and e-mail. */
export function indicator(i: number): Indicator {
  const k = i % 20;
  const term: IndicatorTerm =
    k < 7
      ? { type: 'ipv4', value: `${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}.${(i * 7) & 255}` }
      : k < 9
        ? { type: 'ipv6', value: `2001:db8:${(i >>> 16).toString(16)}::${(i & 0xffff).toString(16)}` }
        : k < 10
          ? { type: 'cidr', value: `${(i >>> 8) & 255}.${i & 255}.${(i >>> 4) & 240}.0/${20 + (i % 5)}` }
          : k < 14
            ? { type: 'domain', value: `host${i}.bad${i % 977}.example` }
            : k < 15
              ? { type: 'url', value: `http://dl${i}.bad.example/p/${i}.exe` }
              : k < 17
                ? { type: 'md5', value: hex(i, 32) }
                : k < 18
                  ? { type: 'sha1', value: hex(i, 40) }
                  : k < 19
                    ? { type: 'sha256', value: hex(i, 64) }
                    : { type: 'email', value: `user${i}@bad${i % 977}.example` };
  return { id: `indicator--${i}`, anyOf: [[term]], confidence: 80, source: `[${term.type} = '${term.value}']` };
}

/** 20,000 events: Zeek conn, dns, http and files records and sshd journal failures, normalized. */
function eventMix(): NormalizedEvent[] {
  const zeek = NORMALIZERS.get('network-monitor')!;
  const journal = NORMALIZERS.get('linux-journal')!;
  const out: NormalizedEvent[] = [];
  const ctx = { ingestedAt: '2026-11-22T10:00:00.000Z' };
  for (let i = 0; i < 20_000; i++) {
    const conn = zeekConn(i);
    const base = { ...conn, 'id.resp_h': `198.51.${(i >> 8) & 255}.${i & 255}` };
    const k = i % 5;
    const r =
      k === 0
        ? zeek.normalize(base, { ...ctx, logType: 'conn' })
        : k === 1
          ? zeek.normalize(
              { ...base, query: `www${i}.site${i % 300}.example.com`, answers: ['192.0.2.1'] },
              {
                ...ctx,
                logType: 'dns',
              },
            )
          : k === 2
            ? zeek.normalize(
                { ...base, host: `cdn${i % 50}.example.net`, uri: `/assets/${i}.js` },
                {
                  ...ctx,
                  logType: 'http',
                },
              )
            : k === 3
              ? zeek.normalize(
                  { ...base, fuid: `F${i}`, md5: hex(i * 31, 32), sha1: hex(i * 31, 40) },
                  {
                    ...ctx,
                    logType: 'files',
                  },
                )
              : journal.normalize(journalEntry(i), ctx);
    if (r.ok) out.push(...r.events);
  }
  return out;
}

/** µs per event of matching every event, median of three rounds. */
function matchCost(match: (e: NormalizedEvent, at: number) => unknown, events: NormalizedEvent[]): number {
  const at = Date.parse('2026-11-22T10:00:00.000Z');
  const rounds: number[] = [];
  for (let r = 0; r < 3; r++) {
    const t = performance.now();
    for (const e of events) match(e, at);
    rounds.push(((performance.now() - t) * 1000) / events.length);
  }
  return rounds.sort((a, b) => a - b)[1]!;
}

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;

/** The section's figures. */
export async function intelBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const events = eventMix();
  const empty = createIndicatorIndex();
  const none = matchCost(empty.match, events);

  gc();
  const bare = process.memoryUsage().heapUsed;
  const indicators = Array.from({ length: 1_000_000 }, (_, i) => indicator(i));
  gc();
  const before = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss };
  const t = performance.now();
  const index = createIndicatorIndex();
  index.add(indicators, { feed: 'bench', version: '1' });
  const buildMs = performance.now() - t;
  gc();
  const after = { heap: process.memoryUsage().heapUsed, rss: process.memoryUsage().rss };
  const full = matchCost(index.match, events);
  let matched = 0;
  for (const e of events) matched += index.match(e, Date.parse(e.time)).length;

  // Ingest through the writer, 0 rules, the detection bench's batches: the CPU an event costs today.
  const inst = await openInstanceStore(join(scratch('intel-ingest'), 'store'));
  const batches = mixedBatches('2026-11-22T10:00:00.000Z').slice(0, 20);
  const spent = (await ingestInTurn([inst], batches, '2026-11-22T10:00:00.000Z')).get(inst)!;
  await inst.close();
  const ingestUs = (spent.cpuMs * 1000) / (batches.length * 1000);
  const batchEvents = batches.flatMap((b) => b.flatMap((r) => r.events));
  const withAll = matchCost(index.match, batchEvents);
  const added = withAll - matchCost(empty.match, batchEvents);

  figures.push(
    { name: 'match, no indicators (Zeek conn/dns/http/files + sshd journal)', value: round(none), unit: 'µs/event' },
    {
      name: 'match, 1,000,000 indicators of mixed kinds',
      value: round(full),
      unit: 'µs/event',
      note: `${matched} matches over ${events.length} events; ${Math.round(1e6 / full)} events/s alone`,
    },
    { name: '  heap added by 1,000,000 indicators (index only)', value: mib(after.heap - before.heap), unit: 'MiB' },
    { name: '  RSS added by the index', value: mib(after.rss - before.rss), unit: 'MiB' },
    {
      name: '  heap of the 1,000,000 indicator objects themselves',
      value: mib(before.heap - bare),
      unit: 'MiB',
      note: 'as the bench makes them; the service holds them as the readers made them',
    },
    { name: 'build the index from 1,000,000 indicators', value: Math.round(buildMs), unit: 'ms' },
    {
      name: 'ingest with 1,000,000 indicators / with none (projected)',
      value: Math.round((ingestUs / (ingestUs + Math.max(0, added))) * 1000) / 10,
      unit: '%',
      note:
        `ingest ${round(ingestUs)} µs CPU/event (detection bench batches, 0 rules)` +
        ` + match ${round(added)} µs added`,
    },
    {
      name: 'ingest with the matcher and 1,000,000 indicators / with no matcher at all (projected)',
      value: Math.round((ingestUs / (ingestUs + withAll)) * 1000) / 10,
      unit: '%',
      note: `the matcher's whole ${round(withAll)} µs/event on those batches charged to ingest`,
    },
  );
  return figures;
}

const round = (x: number): number => Math.round(x * 100) / 100;
