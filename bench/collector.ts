import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { generateKeyPair, spkiPemFromPublicKey } from '../src/kernel/ed25519.js';
import { sealEnvelope } from '../src/events/collector-protocol/open-envelope.js';
import { benchEvent } from './events.js';
import type { Figure } from './foundation.js';
import { benchConfig, cli, scratch, startChild, stopChild, token } from './harness.js';

const STREAMS = 4;
const BODIES_PER_STREAM = 40;
const EVENTS_PER_BODY = 500;

/** CPU seconds a process has used (user + system, all its threads), from /proc. */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8')
    .replace(/^.*\) /, '')
    .split(' ');
  // After the command name: state is field 3, utime 14 and stime 15 (1-based, in clock ticks of 1/100 s).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * POSTs each stream's bodies in order (one in flight per stream), streams in parallel; events/s
 * over the wall time, and events per CPU second of the server (`pid`): the figure that holds when
 * other work shares the machine.
 */
/** One run: events accepted, over how much wall time and server CPU time, failed requests, median latency. */
interface Run {
  accepted: number;
  seconds: number;
  cpuSeconds: number;
  failures: number;
  p50ms: number;
}

async function drive(url: string, streams: Array<{ token: string; bodies: string[] }>, pid: number): Promise<Run> {
  const target = new URL(url);
  const agent = new Agent({ keepAlive: true, maxSockets: streams.length });
  const latencies: number[] = [];
  let failures = 0;
  const post = (body: string, tok: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          agent,
          method: 'POST',
          hostname: target.hostname,
          port: target.port,
          path: target.pathname,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            authorization: `Bearer ${tok}`,
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const t0 = performance.now();
  const cpu0 = cpuSecondsOf(pid);
  await Promise.all(
    streams.map(async (s) => {
      for (const body of s.bodies) {
        const t = performance.now();
        if ((await post(body, s.token)) !== 202) failures++;
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSecondsOf(pid) - cpu0;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const events = streams.reduce((n, s) => n + s.bodies.length, 0) * EVENTS_PER_BODY;
  return {
    accepted: events - failures * EVENTS_PER_BODY,
    seconds,
    cpuSeconds: cpu,
    failures,
    p50ms: latencies[Math.floor(latencies.length / 2)] ?? 0,
  };
}

/** The same events for both routes: NormalizedEvents, and the submitted shape (no category, outcome in attributes). */
function eventsOf(stream: number, body: number): Array<Record<string, unknown>> {
  return Array.from({ length: EVENTS_PER_BODY }, (_, i) =>
    benchEvent(`c${stream}-${body}-${i}`, (stream * BODIES_PER_STREAM + body) * EVENTS_PER_BODY + i),
  );
}

function submitted(e: Record<string, unknown>): Record<string, unknown> {
  const { category: _c, outcome, attributes, ...rest } = e;
  return { ...rest, attributes: { ...(attributes as object), outcome } };
}

async function enroll(url: string, adminToken: string, collectorId: string): Promise<Uint8Array> {
  const issued = await fetch(`${url}/api/v1/collector/enrollment-tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ collectorId }),
  });
  const { token: enrollmentToken } = (await issued.json()) as { token: string };
  const key = generateKeyPair();
  const res = await fetch(`${url}/api/v1/collector/enrollments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ collectorId, enrollmentToken, publicKey: spkiPemFromPublicKey(key.publicKey) }),
  });
  if (res.status !== 201) throw new Error(`enrollment failed: ${res.status} ${await res.text()}`);
  return key.seed;
}

async function signedRun(): Promise<Run> {
  const dir = scratch('collector');
  const config = benchConfig(dir);
  const admin = token(config, dir, 'bench-admin', 'admin');
  const collectorToken = token(config, dir, 'bench-collector', 'collector');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  try {
    const streams = [];
    for (let s = 0; s < STREAMS; s++) {
      const seed = await enroll(serve.url, admin, `bench-${s}`);
      // Signing is the collector's work, done before the clock starts, as the agent does it (the payload in canonical
      // order).
      const bodies = Array.from({ length: BODIES_PER_STREAM }, (_, b) => {
        const payload = {
          schemaVersion: 1,
          collectorId: `bench-${s}`,
          sequence: b + 1,
          collectedAt: '2026-11-22T12:00:00.000Z',
          facts: [],
          events: eventsOf(s, b).map(submitted),
        };
        return JSON.stringify(sealEnvelope(payload, seed));
      });
      streams.push({ token: collectorToken, bodies });
    }
    return await drive(`${serve.url}/api/v1/collector/submissions`, streams, serve.proc.pid!);
  } finally {
    await stopChild(serve.proc);
  }
}

async function unsignedRun(): Promise<Run> {
  const dir = scratch('unsigned');
  const config = benchConfig(dir);
  const ingestor = token(config, dir, 'bench-ingestor', 'ingestor');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  try {
    const streams = Array.from({ length: STREAMS }, (_, s) => ({
      token: ingestor,
      bodies: Array.from({ length: BODIES_PER_STREAM }, (_, b) => JSON.stringify(eventsOf(s, b))),
    }));
    return await drive(`${serve.url}/api/v1/events`, streams, serve.proc.pid!);
  } finally {
    await stopChild(serve.proc);
  }
}

/** Rounds of one unsigned then one signed run: alternating spreads what the machine does meanwhile over both. */
const ROUNDS = 3;

/** The rounds of one kind taken together: their events, wall time and server CPU time summed. */
function pooled(runs: readonly Run[]): Run {
  const sum = (f: (r: Run) => number) => runs.reduce((t, r) => t + f(r), 0);
  const p50s = runs.map((r) => r.p50ms).sort((a, b) => a - b);
  return {
    accepted: sum((r) => r.accepted),
    seconds: sum((r) => r.seconds),
    cpuSeconds: sum((r) => r.cpuSeconds),
    failures: sum((r) => r.failures),
    p50ms: p50s[Math.floor(p50s.length / 2)]!,
  };
}

const perSecond = (r: Run) => r.accepted / r.seconds;
const perCpuSecond = (r: Run) => r.accepted / r.cpuSeconds;

/**
 * The collector section of `npm run bench` (issue 5): signed submissions against unsigned ingest of the same events.
 */
export async function collectorBench(report: Record<string, unknown>): Promise<Figure[]> {
  const unsignedRuns: Run[] = [];
  const signedRuns: Run[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    unsignedRuns.push(await unsignedRun());
    signedRuns.push(await signedRun());
  }
  const unsigned = pooled(unsignedRuns);
  const signed = pooled(signedRuns);
  const perRound = signedRuns
    .map((r, i) => `${Math.round((perCpuSecond(r) / perCpuSecond(unsignedRuns[i]!)) * 1000) / 10}`)
    .join(' / ');
  report.collector = { unsigned, signed, unsignedRuns, signedRuns };
  const note =
    `${ROUNDS} alternating rounds of ${STREAMS} streams x ${BODIES_PER_STREAM} bodies x ` +
    `${EVENTS_PER_BODY} events, one request in flight per stream`;
  return [
    {
      name: 'unsigned POST /api/v1/events, 500-event batches',
      value: Math.round(perSecond(unsigned)),
      unit: 'events/s',
      note:
        `${Math.round(perCpuSecond(unsigned))} events per server CPU-s; median p50 ${unsigned.p50ms.toFixed(1)} ` +
        `ms, ${unsigned.failures} failures; ${note}`,
    },
    {
      name: 'signed POST /api/v1/collector/submissions, 500 events each',
      value: Math.round(perSecond(signed)),
      unit: 'events/s',
      note:
        `${Math.round(perCpuSecond(signed))} events per server CPU-s; median p50 ${signed.p50ms.toFixed(1)} ms, ` +
        `${signed.failures} failures`,
    },
    {
      name: 'signed as a share of unsigned (target >= 90%)',
      value: Math.round((perSecond(signed) / perSecond(unsigned)) * 1000) / 10,
      unit: '%',
      note: 'wall-clock, rounds pooled',
    },
    {
      name: 'signed as a share of unsigned, per server CPU second',
      value: Math.round((perCpuSecond(signed) / perCpuSecond(unsigned)) * 1000) / 10,
      unit: '%',
      note: `rounds pooled; per round ${perRound} %; holds on a busy machine`,
    },
  ];
}
