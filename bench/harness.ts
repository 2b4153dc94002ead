import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decideIngestRaw } from '../src/commands/ingest-raw.js';
import type { NormalizedEvent } from '../src/events/normalized-event.js';
import { DEFAULT_DETECTION, type InstanceStore } from '../src/cli/instance/open.js';
import { openCredentialRegistry } from '../src/auth/registry.js';
import { createIngestAdmission } from '../src/http/admission.js';
import { createApp } from '../src/http/app.js';
import { readYourWritesOf } from '../src/http/read-consistency.js';
import { createRefusalLedger } from '../src/http/refusals.js';
import type { Config } from '../src/services/config-schema.js';

/** The compiled repository root (bench runs from dist/bench). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The compiled CLI. */
export const cli = join(root, 'dist', 'src', 'cli', 'main.js');

/** Scratch directories of this process, removed when it exits (a section runs in a process of its own). */
const scratchDirs: string[] = [];
process.once('exit', () => {
  // VIGIL_BENCH_KEEP=1 keeps them for inspection; otherwise a full run would leave tens of GiB behind.
  if (process.env.VIGIL_BENCH_KEEP !== '1')
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
});

/** A fresh temp directory for one benchmark, removed when the section's process exits. */
export function scratch(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `vigil-bench-${name}-`));
  scratchDirs.push(dir);
  return dir;
}

/** Runs the CLI synchronously and returns stdout (throws on failure). */
export function vigil(args: string[], cwd: string): string {
  const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`vigil ${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}

/** `runs` timings of `f` in milliseconds: the median and the slowest. */
export function timeRuns(runs: number, f: () => unknown): { p50: number; max: number } {
  const ms = Array.from({ length: runs }, () => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  }).sort((a, b) => a - b);
  return { p50: ms[Math.floor(runs / 2)]!, max: ms.at(-1)! };
}

/** Writes a config for a bench instance (port 0, no loopback admin) and returns its path. */
export function benchConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, 'vigil.config.json');
  writeFileSync(
    path,
    JSON.stringify({
      server: { port: 0 },
      auth: { credentialsFile: 'secrets/credentials.json' },
      storage: { path: 'store' },
      ...extra,
    }),
  );
  return path;
}

/** Creates a credential and returns its token. */
export function token(config: string, dir: string, principal: string, role: string): string {
  return (JSON.parse(vigil(['api-token-generate', principal, role, '--config', config], dir)) as { token: string })
    .token;
}

/** Starts a child that prints a JSON line with `url` first; resolves with it. */
export function startChild(
  args: string[],
  cwd: string,
  urlPattern = /"url":"([^"]+)"/,
): Promise<{ proc: ChildProcess; url: string; startedMs: number; readyMs: number }> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  return new Promise((resolveStart, reject) => {
    proc.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = urlPattern.exec(out);
      if (m) resolveStart({ proc, url: m[1]!, startedMs: t0, readyMs: performance.now() - t0 });
    });
    proc.once('exit', (code) => reject(new Error(`child exited ${code}: ${out}`)));
  });
}

/** Stops a child with SIGTERM and waits. */
export function stopChild(proc: ChildProcess): Promise<void> {
  return new Promise((r) => {
    if (proc.exitCode !== null) return r();
    proc.once('exit', () => r());
    proc.kill('SIGTERM');
  });
}

/** Peak resident set of a process in MiB (VmHWM). */
export function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Load result of bench/load.ts. */
export interface LoadResult {
  requests: number;
  failures: number;
  seconds: number;
  eventsPerSecond: number;
  p50ms: number;
  p99ms: number;
}

/** Runs the load generator in its own process. */
export function load(
  url: string,
  bodies: string[],
  eventsPerBody: number,
  opts: { token?: string; connections?: number; seconds?: number } = {},
): LoadResult {
  const dir = scratch('load');
  const jobPath = join(dir, 'job.json');
  writeFileSync(
    jobPath,
    JSON.stringify({
      url,
      bodies,
      eventsPerBody,
      connections: opts.connections ?? 4,
      seconds: opts.seconds ?? 15,
      ...(opts.token ? { token: opts.token } : {}),
    }),
  );
  const r = spawnSync(process.execPath, [join(root, 'dist', 'bench', 'load.js'), jobPath], {
    encoding: 'utf8',
    maxBuffer: 1 << 24,
  });
  if (r.status !== 0) throw new Error(`load failed: ${r.stderr}`);
  return JSON.parse(r.stdout) as LoadResult;
}

/** What a store spent on its batches in `ingestInTurn`, and the alerts they raised or grew. */
export interface TurnSpend {
  cpuMs: number;
  wallMs: number;
  alerts: number;
}

/**
 * Ingest + detect of the same batches into several stores in turn (the order rotating every batch),
 * each batch followed by its read side catching up, and each store charged the CPU time (all the
 * process's threads) and wall-clock time of its own batches: whatever else the machine is doing
 * then weighs on every store alike, so their ratios hold on a busy machine.
 */
export async function ingestInTurn(
  stores: readonly InstanceStore[],
  batches: ReadonlyArray<Array<{ record: unknown; events: NormalizedEvent[] }>>,
  now: string,
): Promise<Map<InstanceStore, TurnSpend>> {
  const spent = new Map(stores.map((s) => [s, { cpuMs: 0, wallMs: 0, alerts: 0 }]));
  for (const [b, normalized] of batches.entries()) {
    for (let j = 0; j < stores.length; j++) {
      const inst = stores[(b + j) % stores.length]!;
      const s = spent.get(inst)!;
      const ctx = { now };
      const t = performance.now();
      const c = process.cpuUsage();
      const out = await inst.pipeline.dispatch({
        decide: (m) => decideIngestRaw(m, { normalizer: 'mixed', normalized }),
        ctx: ctx,
      });
      await inst.readYourWrites(60_000);
      const used = process.cpuUsage(c);
      s.cpuMs += (used.user + used.system) / 1000;
      s.wallMs += performance.now() - t;
      if (out.ok) s.alerts += out.detections.alerts.length;
    }
  }
  return spent;
}

/** The median of numbers (the upper one of an even count). */
export const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Shares as the figures' notes show them: `93.3 % / 110.2 % / 89.4 %`. */
export const percents = (xs: readonly number[]): string => xs.map((x) => `${Math.round(x * 1000) / 10} %`).join(' / ');

/**
 * `rounds` rounds of ingestInTurn, each over the batches `batchesOf(round)` gives (new events, so none is a
 * duplicate), and each store's rate as a share of the first store's, round by round (first store's CPU / its CPU).
 */
export async function sharesInTurn(
  stores: readonly InstanceStore[],
  rounds: number,
  batchesOf: (round: number) => ReadonlyArray<Array<{ record: unknown; events: NormalizedEvent[] }>>,
  now: string,
): Promise<{
  shares: (s: InstanceStore) => number[];
  alerts: (s: InstanceStore) => number;
  cpuMs: (s: InstanceStore) => number[];
}> {
  const spent: Array<Map<InstanceStore, TurnSpend>> = [];
  for (let round = 0; round < rounds; round++) spent.push(await ingestInTurn(stores, batchesOf(round), now));
  return {
    shares: (s) => spent.map((r) => r.get(stores[0]!)!.cpuMs / r.get(s)!.cpuMs),
    alerts: (s) => spent.reduce((n, r) => n + r.get(s)!.alerts, 0),
    cpuMs: (s) => spent.map((r) => r.get(s)!.cpuMs),
  };
}

/**
 * The app of a bench store, in process and as loopback administration (no network): what `console-pages` and `plan`
 * time, each request committing its access and audit records as a served one does.
 */
export function inProcessApp(inst: InstanceStore, config: Config): ReturnType<typeof createApp> {
  return createApp({
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
}
