/**
 * Load generator, run as its own process: POSTs pre-built JSON bodies over keep-alive HTTP with
 * N concurrent connections and prints one JSON line with the count, rate and latencies.
 * Input (argv[2]) is a JSON file: {url, token?, bodies: string[], connections, seconds, eventsPerBody}.
 */
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';

interface Job { url: string; token?: string; bodies: string[]; connections: number; seconds: number; eventsPerBody: number }

const job = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Job;
const url = new URL(job.url);
const agent = new Agent({ keepAlive: true, maxSockets: job.connections });
const latencies: number[] = [];
let next = 0;
let failures = 0;
const deadline = performance.now() + job.seconds * 1000;

function post(body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, method: 'POST', hostname: url.hostname, port: url.port, path: url.pathname + url.search,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(job.token ? { authorization: `Bearer ${job.token}` } : {}) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function worker(): Promise<void> {
  while (performance.now() < deadline && next < job.bodies.length) {
    const body = job.bodies[next++]!;
    const t0 = performance.now();
    const status = await post(body);
    latencies.push(performance.now() - t0);
    if (status !== 202 && status !== 200) failures++;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: job.connections }, worker));
const seconds = (performance.now() - started) / 1000;
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? 0;
process.stdout.write(`${JSON.stringify({ requests: latencies.length, failures, seconds, eventsPerSecond: (latencies.length - failures) * job.eventsPerBody / seconds, p50ms: pct(0.5), p99ms: pct(0.99) })}\n`);
agent.destroy();
