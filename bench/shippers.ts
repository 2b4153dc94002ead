import { connect, createServer, type AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Figure } from './foundation.js';
import { benchConfig, cli, scratch, startChild, stopChild, token } from './harness.js';

const SECONDS = 10;

/** A port free on loopback right now (the listener binds it a moment later). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** The accepted count of a syslog listener, read from `/metrics`. */
async function acceptedSyslog(url: string, viewer: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${viewer}` } })).text();
  return Number(/vigil_syslog_messages_total\{listener="bench",outcome="accepted"\} (\d+)/.exec(text)?.[1] ?? 0);
}

/**
 * Sends octet-counted RFC 5424 messages on one connection for `seconds`, honouring back-pressure; resolves with how
 * many.
 */
function blast(port: number, conn: number, seconds: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let sent = 0;
    const until = performance.now() + seconds * 1000;
    const write = () => {
      while (performance.now() < until) {
        const frames: string[] = [];
        for (let i = 0; i < 200; i++, sent++) {
          // One line in ten is an sshd failure (detections work on it); the rest are application lines.
          const msg =
            sent % 10 === 0
              ? `<38>1 2026-11-23T10:00:00.000Z web-0${conn} sshd ${1000 + conn} - - Failed password for invalid ` +
                `user u${sent} from 198.51.100.${conn} port ${20000 + (sent % 40000)} ssh2`
              : `<134>1 2026-11-23T10:00:00.000Z web-0${conn} billing ${2000 + conn} ORD [req@32473 id="${sent}"] ` +
                `order ${sent} handled path=/api/orders status=200 ms=12`;
          frames.push(`${Buffer.byteLength(msg)} ${msg}`);
        }
        if (!socket.write(frames.join(''))) return void socket.once('drain', write);
      }
      socket.end(() => resolve(sent));
    };
    socket.once('connect', write);
    socket.once('error', reject);
  });
}

/** Messages per second a TCP syslog listener stores (RFC 5424, octet-counted, 4 connections), sent to durable. */
async function syslogThroughput(): Promise<Figure[]> {
  const dir = scratch('syslog');
  const port = await freePort();
  const config = benchConfig(dir, {
    syslog: { listeners: [{ name: 'bench', protocol: 'tcp', port, messagesPerSecond: 1_000_000 }] },
  });
  const viewer = token(config, dir, 'prometheus', 'viewer');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  const t0 = performance.now();
  const sent = (await Promise.all([0, 1, 2, 3].map((c) => blast(port, c, SECONDS)))).reduce((a, b) => a + b, 0);
  let stored = 0;
  for (let i = 0; i < 1200 && stored < sent; i++) {
    stored = await acceptedSyslog(serve.url, viewer);
    if (stored < sent) await new Promise((r) => setTimeout(r, 250));
  }
  const seconds = (performance.now() - t0) / 1000;
  await stopChild(serve.proc);
  return [
    {
      name: 'syslog TCP, RFC 5424 octet-counted, 4 connections, 10 % sshd failures',
      value: Math.round(stored / seconds),
      unit: 'messages/s',
      note: `${stored} of ${sent} stored in ${seconds.toFixed(1)} s, from first byte to durable`,
    },
  ];
}

/** An OTLP/JSON export of `n` records like an SDK's, each distinct. */
function exportBody(batch: number, n: number): string {
  const logRecords = Array.from({ length: n }, (_, i) => ({
    timeUnixNano: String(1_763_892_000_000_000_000n + BigInt(batch * n + i)),
    severityNumber: 13,
    severityText: 'WARN',
    body: { stringValue: `login failed for user u${batch * n + i}` },
    attributes: [
      { key: 'user.name', value: { stringValue: `u${i % 50}` } },
      { key: 'client.address', value: { stringValue: '203.0.113.7' } },
      { key: 'attempts', value: { intValue: String(i % 7) } },
    ],
  }));
  return JSON.stringify({
    resourceLogs: [
      {
        resource: {
          attributes: [
            { key: 'service.name', value: { stringValue: 'billing' } },
            { key: 'host.name', value: { stringValue: 'app-01' } },
          ],
        },
        scopeLogs: [{ scope: { name: 'bench' }, logRecords }],
      },
    ],
  });
}

/**
 * Records per second through `POST /api/v1/otlp/v1/logs` (OTLP/JSON, gzip, 100 records an export, 4 concurrent
 * exporters).
 */
async function otlpThroughput(): Promise<Figure[]> {
  const dir = scratch('otlp');
  const config = benchConfig(dir);
  const ingestor = token(config, dir, 'collector-otel', 'ingestor');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  const bodies = Array.from({ length: 400 }, (_, b) => gzipSync(exportBody(b, 100)));
  let next = 0;
  let records = 0;
  let failures = 0;
  const until = performance.now() + SECONDS * 1000;
  const t0 = performance.now();
  await Promise.all(
    [0, 1, 2, 3].map(async () => {
      while (performance.now() < until && next < bodies.length) {
        const body = bodies[next++]!;
        const res = await fetch(`${serve.url}/api/v1/otlp/v1/logs`, {
          method: 'POST',
          body,
          headers: {
            authorization: `Bearer ${ingestor}`,
            'content-type': 'application/json',
            'content-encoding': 'gzip',
          },
        });
        await res.arrayBuffer();
        if (res.status === 200) records += 100;
        else failures++;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await stopChild(serve.proc);
  return [
    {
      name: 'OTLP/JSON gzip, 100 records an export, 4 exporters',
      value: Math.round(records / seconds),
      unit: 'records/s',
      note: `${failures} exports refused (429)`,
    },
  ];
}

/** The shipper edges: syslog over TCP and OTLP/HTTP, each into a real `vigil serve`. */
export async function shippersBench(): Promise<Figure[]> {
  return [...(await syslogThroughput()), ...(await otlpThroughput())];
}
