import { join } from 'node:path';
import * as v from 'valibot';
import { openCredentialRegistry } from '../src/auth/registry.js';
import { ConfigSchema } from '../src/services/config-schema.js';
import { eventOf } from '../src/events/union.js';
import { createIngestAdmission } from '../src/http/admission.js';
import { createApp } from '../src/http/app.js';
import { readYourWritesOf } from '../src/http/read-consistency.js';
import { createRefusalLedger } from '../src/http/refusals.js';
import { openInstanceStore } from '../src/cli/instance/open.js';
import type { Figure } from './foundation.js';
import { scratch } from './harness.js';

/** Alerts stored before the pages are timed (the figure: pages under 200 ms with 100k alerts). */
const ALERTS = 100_000;
const RUNS = 15;
const LEVELS = [
  ['informational', 1],
  ['low', 3],
  ['medium', 5],
  ['high', 8],
  ['critical', 10],
] as const;

/** `n` alerts over 500 rules and 5,000 systems, spread over the last two days. */
function alerts(from: number, n: number, now: number) {
  return Array.from({ length: n }, (_, k) => {
    const i = from + k;
    const [level, severity] = LEVELS[i % LEVELS.length]!;
    const at = new Date(now - (i % 2880) * 60_000).toISOString();
    return eventOf('AlertRaised', {
      alertId: `alr_bench${i}`,
      ruleId: `rule-${i % 500}`,
      groupKey: `host:h${i % 5000}`,
      title: `Bench rule ${i % 500}`,
      level,
      severity,
      confidence: 0.7,
      matchReason: {
        selections: ['sel'],
        fields: [{ selection: 'sel', field: 'query', modifiers: [], value: 'evil.example' }],
        keywords: [],
      },
      evidence: [{ eventId: `evt-${i}`, time: at, summary: 'bench event' }],
      affectedSystems: [`host:h${i % 5000}`],
      firstSeen: at,
      lastSeen: at,
      tags: [],
    });
  });
}

/** The median and 95th percentile of `runs` timings of one page. */
async function time(
  fetchPage: () => Promise<Response>,
  runs: number,
): Promise<{ p50: number; p95: number; bytes: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await fetchPage();
    const body = await res.text();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`page answered ${res.status}: ${body.slice(0, 300)}`);
    bytes = body.length;
  }
  ms.sort((a, b) => a - b);
  return {
    p50: ms[Math.floor(ms.length / 2)]!,
    p95: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)]!,
    bytes,
  };
}

/**
 * Console pages with 100,000 alerts stored: the time from request to the whole HTML, in process
 * (no network), as loopback administration sees them. Each request also commits its access and
 * audit records durably, as every console request does.
 */
export async function consolePagesBench(): Promise<Figure[]> {
  const dir = scratch('console-pages');
  const config = v.parse(ConfigSchema, {
    server: { allowLoopbackAdmin: true },
    auth: { credentialsFile: join(dir, 'credentials.json') },
    storage: { path: join(dir, 'store') },
  });
  const inst = await openInstanceStore(config.storage.path);
  const now = Date.now();
  const t0 = performance.now();
  for (let i = 0; i < ALERTS; i += 2000)
    await inst.writer.record(alerts(i, 2000, now), { now: new Date(now).toISOString() });
  const storeSeconds = (performance.now() - t0) / 1000;
  const app = createApp({
    pipeline: inst.pipeline,
    registry: openCredentialRegistry(config.auth.credentialsFile, () => {}, 0),
    config,
    now: () => new Date(),
    peerOf: () => '127.0.0.1',
    log: () => {},
    refusals: createRefusalLedger(config.limits),
    admission: createIngestAdmission(config.limits),
    reads: inst.reads,
    graph: (q) => inst.readSide.graph(q),
    readYourWrites: readYourWritesOf(() => inst.readYourWrites()),
  });
  const get = (path: string) => () => Promise.resolve(app.request(path, { headers: { accept: 'text/html' } }));
  const pages: Array<[string, string]> = [
    ['overview', '/'],
    ['alert queue (all, newest first)', '/alerts'],
    ['alert queue (open, high+, by severity)', '/alerts?status=open&severity=high&sort=-severity'],
    ['alert queue (one system)', '/alerts?entity=host%3Ah42'],
    ['alert detail', '/alerts/alr_bench4242'],
    ['incidents', '/incidents'],
    ['detection plan', '/plan'],
  ];
  const figures: Figure[] = [
    { name: 'console: alerts stored', value: ALERTS, unit: 'alerts', note: `recorded in ${storeSeconds.toFixed(1)} s` },
  ];
  await time(get('/'), 2);
  for (const [name, path] of pages) {
    const r = await time(get(path), RUNS);
    figures.push({
      name: `console page: ${name}`,
      value: Math.round(r.p50 * 10) / 10,
      unit: 'ms p50',
      note: `p95 ${r.p95.toFixed(1)} ms, ${Math.round(r.bytes / 1024)} KiB`,
    });
  }
  await inst.close();
  return figures;
}
