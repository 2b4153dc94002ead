/**
 * Load generator, run as its own process: POSTs pre-built JSON bodies over keep-alive HTTP with
 * N concurrent connections and prints one JSON line with the count, rate and latencies.
 * Input (argv[2]) is a JSON file: {url, token?, bodies: string[], connections, seconds, eventsPerBody,
 * retryRefused?, rate?}. With `rate` (requests per second) the load is open-loop: a request is
 * started every 1/rate s on a free connection whatever the answers (offered load fixed), and a
 * refused body is not resent. With `retryRefused` a body answered 429 is sent again at once (a client that
 * ignores Retry-After), so the offered load stays at its maximum; latencies are then those of the
 * accepted requests, and the output adds every status's count.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

interface Job {
  url: string;
  token?: string;
  bodies: string[];
  connections: number;
  seconds: number;
  eventsPerBody: number;
  retryRefused?: boolean;
  rate?: number;
}

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
const url = new URL(job.url);
const agent = new Agent({ keepAlive: true, maxSockets: job.connections });
const latencies: number[] = [];
let next = 0;
let failures = 0;
const statuses: Record<string, number> = {};
const deadline = performance.now() + job.seconds * 1000;

function post(body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        agent,
        method: 'POST',
        hostname: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(job.token ? { authorization: `Bearer ${job.token}` } : {}),
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
}

async function worker(): Promise<void> {
  while (performance.now() < deadline && next < job.bodies.length) {
    const body = job.bodies[next++]!;
    for (;;) {
      const t0 = performance.now();
      // A refused request's connection may be closed before its body is sent (the server does not
      // drain a refused body for long): count it and go on.
      const status = await post(body).catch(() => 0);
      statuses[status || 'reset'] = (statuses[status || 'reset'] ?? 0) + 1;
      if (job.retryRefused && status === 429) {
        if (performance.now() >= deadline) return;
        continue;
      }
      latencies.push(performance.now() - t0);
      if (status !== 202 && status !== 200) failures++;
      break;
    }
  }
}

/** Open loop: one request every 1/rate s while a connection is free; answers do not slow the schedule. */
async function openLoop(rate: number): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  const start = performance.now();
  for (let i = 0; performance.now() < deadline && next < job.bodies.length; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    if (inFlight.size >= job.connections) {
      statuses['not-sent'] = (statuses['not-sent'] ?? 0) + 1;
      continue;
    }
    const body = job.bodies[next++]!;
    const t0 = performance.now();
    const p: Promise<void> = post(body)
      .then(
        (status) => {
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status === 202 || status === 200) latencies.push(performance.now() - t0);
          else if (status !== 429) failures++;
        },
        () => {
          failures++;
        },
      )
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
}

const started = performance.now();
if (job.rate) await openLoop(job.rate);
else await Promise.all(Array.from({ length: job.connections }, worker));
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
const answered = job.rate ? latencies.length : latencies.length - failures;
const eventsPerSecond = (answered * job.eventsPerBody) / seconds;
const summary = {
  requests: latencies.length,
  failures,
  seconds,
  eventsPerSecond,
  p50ms: pct(0.5),
  p99ms: pct(0.99),
  statuses,
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
agent.destroy();
