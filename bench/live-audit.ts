import { spawn, type ChildProcess } from 'node:child_process';
import { eventBodies } from './events.js';
import type { Figure } from './foundation.js';
import { benchConfig, cli, load, scratch, startChild, stopChild, token, type LoadResult } from './harness.js';

/** Rounds of each side, alternating (ingest alone, then beside verifies), and seconds of load in each. */
const ROUNDS = 3;
const SECONDS = 8;
const EVENTS_PER_BODY = 1000;

/** `vigil log verify` over and over in a shell loop of its own, so one always runs while the load does. */
interface VerifyLoop {
  /** Stops the loop (and the verify running); resolves with how many verifies completed, all of them ok. */
  stop(): Promise<number>;
}

function verifyLoop(config: string, dir: string): VerifyLoop {
  const verify = `"${process.execPath}" "${cli}" log verify --config "${config}"`;
  const script = `while :; do ${verify} >/dev/null || exit 1; echo ok; done`;
  const proc: ChildProcess = spawn('sh', ['-c', script], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let completed = 0;
  let failed = false;
  proc.stdout!.on(
    'data',
    (c: Buffer) =>
      (completed += c
        .toString()
        .split('\n')
        .filter((l) => l === 'ok').length),
  );
  proc.once('exit', (code) => (failed = code === 1));
  return {
    async stop() {
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        // The shell and the verify it runs are one process group.
        process.kill(-proc.pid!, 'SIGTERM');
        await exited;
      }
      if (failed) throw new Error('a vigil log verify beside the load failed');
      return completed;
    },
  };
}

/** Events over summed seconds of several load runs. */
const pooled = (runs: readonly LoadResult[]) =>
  runs.reduce((n, r) => n + r.eventsPerSecond * r.seconds, 0) / runs.reduce((s, r) => s + r.seconds, 0);

/**
 * Issue 58: ingest (`POST /api/v1/events`, 1000-event batches, 4 connections) into a `vigil serve`
 * alone, and while `vigil log verify` runs beside it in another process, over and over (a verify
 * always running: the worst case of an auditor), on the same store, rounds alternating. Target:
 * ingest keeps at least 80 % of its rate.
 */
export async function liveAuditBench(): Promise<Figure[]> {
  const dir = scratch('live-audit');
  const config = benchConfig(dir);
  const t = token(config, dir, 'bench', 'ingestor');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  const url = `${serve.url}/api/v1/events`;
  const alone: LoadResult[] = [];
  const beside: LoadResult[] = [];
  let verifies = 0;
  try {
    // A log of some size first, so that a verify walks more than a few records.
    load(url, eventBodies('warm', 160, EVENTS_PER_BODY), EVENTS_PER_BODY, { token: t, seconds: SECONDS });
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(
        load(url, eventBodies(`a${round}`, 400, EVENTS_PER_BODY), EVENTS_PER_BODY, { token: t, seconds: SECONDS }),
      );
      const verifying = verifyLoop(config, dir);
      beside.push(
        load(url, eventBodies(`v${round}`, 400, EVENTS_PER_BODY), EVENTS_PER_BODY, { token: t, seconds: SECONDS }),
      );
      verifies += await verifying.stop();
    }
  } finally {
    await stopChild(serve.proc);
  }
  const a = pooled(alone);
  const b = pooled(beside);
  const rates = (runs: readonly LoadResult[]) =>
    runs.map((r) => Math.round(r.eventsPerSecond).toLocaleString('en')).join(' / ');
  const perRound = beside.map((r, i) => Math.round((r.eventsPerSecond / alone[i]!.eventsPerSecond) * 1000) / 10);
  const failures = [...alone, ...beside].reduce((n, r) => n + r.failures, 0);
  return [
    {
      name: 'ingest alone',
      value: Math.round(a),
      unit: 'events/s',
      note: `${ROUNDS} rounds of ${SECONDS} s pooled (${rates(alone)})`,
    },
    {
      name: 'ingest while vigil log verify runs beside it',
      value: Math.round(b),
      unit: 'events/s',
      note: `${rates(beside)}; ${verifies} verifies completed, all ok; ${failures} requests failed in all`,
    },
    {
      name: 'live verify: ingest beside it / ingest alone',
      value: Math.round((b / a) * 1000) / 10,
      unit: '%',
      note: `target >= 80 %; per round ${perRound.join(' / ')}`,
    },
  ];
}
