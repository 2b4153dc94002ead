import { spawn } from 'node:child_process';
import { get } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Figure } from './foundation.js';
import { benchConfig, cli, load, root, scratch, startChild, stopChild, token, type LoadResult } from './harness.js';
import { eventBodies } from './events.js';

/** The load generator in its own process, without blocking this one (which samples /health meanwhile). */
function loadAsync(job: Record<string, unknown>): Promise<LoadResult & { statuses: Record<string, number> }> {
  const dir = scratch('overload-load');
  const jobPath = join(dir, 'job.json');
  writeFileSync(jobPath, JSON.stringify(job));
  const child = spawn(process.execPath, [join(root, 'dist', 'bench', 'load.js'), jobPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(out) as LoadResult & { statuses: Record<string, number> })
        : reject(new Error(`load exited ${code}`)),
    ),
  );
}

/** Resident memory of a process now: VmRSS and its anonymous part (heap, not LMDB's mapped file), MiB. */
export function rssNowMiB(pid: number): { rss: number; anon: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rss: kb('VmRSS'), anon: kb('RssAnon'), peak: kb('VmHWM') };
}

export const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/** One GET /health on a connection of its own (no keep-alive race); resolves with the milliseconds it took, or -1. */
function healthOnce(url: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = get(`${url}/health`, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - t0 : -1));
    });
    req.on('error', () => resolve(-1));
  });
}

/**
 * Runs a load while sampling /health every 100 ms; the sorted /health latencies come back with it (failures as
 * Infinity).
 */
export async function withHealthSamples(
  url: string,
  job: Record<string, unknown>,
): Promise<{ result: LoadResult & { statuses: Record<string, number> }; health: number[] }> {
  const running = loadAsync(job);
  const health: number[] = [];
  let done = false;
  void running.finally(() => {
    done = true;
  });
  while (!done) {
    const ms = await healthOnce(url);
    health.push(ms < 0 ? Infinity : ms);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { result: await running, health: health.sort((a, b) => a - b) };
}

/**
 * The overload section (issue 10): the route's capacity with 4 connections; then twice that
 * offered open-loop (a 1000-event batch every 1/(2 x capacity) s, whatever the answers); then
 * a hostile load of 32 connections resending every 429 at once. For each: the accepted share of
 * capacity, p99 of accepted requests, /health latency sampled meanwhile, the server's RSS.
 */
export async function overloadBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const dir = scratch('overload');
  const config = benchConfig(dir);
  const ingest = token(config, dir, 'bench', 'ingestor');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  try {
    const capacity = load(`${serve.url}/api/v1/events`, eventBodies('cap', 120, 1000), 1000, {
      token: ingest,
      connections: 4,
      seconds: 10,
    });
    figures.push({
      name: 'capacity: POST /api/v1/events, 1000-event batches, 4 connections',
      value: Math.round(capacity.eventsPerSecond),
      unit: 'events/s',
      note: `p99 ${capacity.p99ms.toFixed(0)} ms`,
    });
    const cases: Array<[string, Record<string, unknown>]> = [
      ['2x capacity offered', { connections: 64, rate: (2 * capacity.eventsPerSecond) / 1000 }],
      ['hostile, 32 connections resending every 429', { connections: 32, retryRefused: true }],
    ];
    for (const [name, shape] of cases) {
      const { result, health } = await withHealthSamples(serve.url, {
        url: `${serve.url}/api/v1/events`,
        token: ingest,
        bodies: eventBodies(`o${figures.length}`, 600, 1000),
        eventsPerBody: 1000,
        seconds: 15,
        ...shape,
      });
      const rss = rssNowMiB(serve.proc.pid!);
      const answered = Object.entries(result.statuses)
        .filter(([s]) => s !== 'not-sent')
        .reduce((n, [, c]) => n + c, 0);
      figures.push({
        name: `${name}: accepted`,
        value: Math.round(result.eventsPerSecond),
        unit: 'events/s',
        note: `${result.statuses['429'] ?? 0} of ${answered} requests answered 429`,
      });
      figures.push({
        name: `${name}: accepted share of capacity`,
        value: Math.round((result.eventsPerSecond / capacity.eventsPerSecond) * 1000) / 10,
        unit: '%',
        note: 'target >= 90%',
      });
      figures.push({
        name: `${name}: p99 latency of accepted requests`,
        value: Math.round(result.p99ms),
        unit: 'ms',
        note: `p50 ${result.p50ms.toFixed(0)} ms`,
      });
      figures.push({
        name: `${name}: /health p99 (sampled every 100 ms)`,
        value: Math.round(percentile(health, 0.99)),
        unit: 'ms',
        note: `max ${Math.round(health.at(-1) ?? 0)} ms, ${health.length} samples`,
      });
      figures.push({
        name: `${name}: RSS of vigil serve`,
        value: Math.round(rss.rss),
        unit: 'MiB',
        note: `peak ${Math.round(rss.peak)} MiB, ${Math.round(rss.anon)} MiB anonymous now`,
      });
    }
  } finally {
    await stopChild(serve.proc);
  }
  return figures;
}
