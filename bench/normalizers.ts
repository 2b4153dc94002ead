import { NORMALIZERS } from '../src/normalizers/registry.js';
import { benchConfig, cli, load, scratch, startChild, stopChild, token } from './harness.js';
import type { Figure } from './foundation.js';

/** A realistic Zeek conn record (the shape of zeek-docs conn.log examples). */
export function zeekConn(i: number): Record<string, unknown> {
  return {
    ts: 1_795_338_000 + i * 0.001 + 0.000123,
    uid: `C${i.toString(36)}xYz${(i * 7919).toString(36)}`,
    'id.orig_h': `10.${(i >> 8) & 255}.${i & 255}.${(i >> 4) & 255}`,
    'id.orig_p': 40000 + (i % 20000),
    'id.resp_h': '192.0.2.10',
    'id.resp_p': 443,
    proto: 'tcp',
    service: 'ssl',
    duration: 0.25,
    orig_bytes: 512,
    resp_bytes: 4096,
    conn_state: 'SF',
    local_orig: true,
    local_resp: false,
    missed_bytes: 0,
    history: 'ShADadfF',
    orig_pkts: 8,
    orig_ip_bytes: 940,
    resp_pkts: 9,
    resp_ip_bytes: 4600,
  };
}

/** A realistic journal entry (sshd failed password, as journalctl -o json prints it). */
export function journalEntry(i: number): Record<string, unknown> {
  return {
    __CURSOR: `s=0;i=${i.toString(16)};b=1;m=${i.toString(16)};t=${(1_795_338_000_000_000 + i).toString(16)};x=1`,
    __REALTIME_TIMESTAMP: String(1_795_338_000_000_000 + i * 1000),
    __MONOTONIC_TIMESTAMP: String(1_000_000 + i),
    _BOOT_ID: 'b0a1c2d3e4f5061728394a5b6c7d8e9f',
    PRIORITY: '6',
    SYSLOG_FACILITY: '4',
    SYSLOG_IDENTIFIER: 'sshd',
    _PID: String(1000 + (i % 5000)),
    _UID: '0',
    _GID: '0',
    _COMM: 'sshd',
    _EXE: '/usr/sbin/sshd',
    _CMDLINE: 'sshd: root [priv]',
    _SYSTEMD_UNIT: 'ssh.service',
    _TRANSPORT: 'syslog',
    _HOSTNAME: 'bastion-01',
    _MACHINE_ID: '0123456789abcdef0123456789abcdef',
    MESSAGE: `Failed password for root from 203.0.${(i >> 8) & 255}.${i & 255} port ${40000 + (i % 20000)} ssh2`,
  };
}

function syslogLine(i: number): Record<string, unknown> {
  return {
    message:
      `<38>1 2026-11-22T09:00:${String(i % 60).padStart(2, '0')}.${String(i % 1_000_000).padStart(6, '0')}Z ` +
      `bastion-01 sshd ${1000 + (i % 9000)} - [meta sequenceId="${i}"] Failed password for root from ` +
      `203.0.113.${i & 255} port ${40000 + (i % 20000)} ssh2`,
  };
}

function otlpRecord(i: number): Record<string, unknown> {
  return {
    timeUnixNano: String(1_795_338_000_000_000_000n + BigInt(i) * 1000n),
    severityNumber: 9,
    severityText: 'INFO',
    body: { stringValue: `GET /api/items/${i} 200` },
    attributes: [
      { key: 'http.method', value: { stringValue: 'GET' } },
      { key: 'http.status_code', value: { intValue: '200' } },
    ],
    traceId: '5b8efff798038103d269b633813fc60c',
    spanId: 'eee19b7ec3c1b174',
  };
}

function meshFlow(i: number): Record<string, unknown> {
  return {
    logged: '2026-11-22T09:00:10Z',
    nodeId: `n${i % 50}CNTRL`,
    start: '2026-11-22T09:00:00Z',
    end: '2026-11-22T09:00:05Z',
    virtualTraffic: [
      {
        proto: 6,
        src: `100.64.0.${i & 255}:${40000 + (i % 1000)}`,
        dst: '100.64.1.7:22',
        txPkts: 41,
        txBytes: 6240,
        rxPkts: 38,
        rxBytes: 9120,
      },
    ],
  };
}

const SOURCES: Array<[string, string | undefined, (i: number) => Record<string, unknown>]> = [
  ['network-monitor', 'conn', zeekConn],
  ['linux-journal', undefined, journalEntry],
  ['syslog-rfc5424', undefined, syslogLine],
  ['opentelemetry-log', undefined, otlpRecord],
  ['mesh-vpn-logs', 'network', meshFlow],
];

/** Normalizer throughput on one core (in-process), and HTTP ingest of Zeek conn against /api/v1/events. */
export async function normalizerBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const [name, logType, make] of SOURCES) {
    const n = NORMALIZERS.get(name)!;
    const records = Array.from({ length: 50_000 }, (_, i) => make(i));
    const ctx = { ingestedAt: '2026-11-22T10:00:00.000Z', ...(logType ? { logType } : {}) };
    // One full pass first: the figure is steady-state throughput, after the JIT has settled.
    for (const r of records) n.normalize(r, ctx);
    const t0 = performance.now();
    for (const r of records) if (!n.normalize(r, ctx).ok) throw new Error(`${name} refused a bench record`);
    figures.push({
      name: `normalize ${name}${logType ? ` logType=${logType}` : ''} (one core)`,
      value: Math.round(records.length / ((performance.now() - t0) / 1000)),
      unit: 'records/s',
    });
  }
  const dir = scratch('ingest');
  const config = benchConfig(dir);
  const t = token(config, dir, 'bench', 'ingestor');
  const serve = await startChild([cli, 'serve', '--config', config], dir);
  // The same kind of events both ways: /api/v1/events gets the NormalizedEvents of other Zeek conn
  // records (so both runs do the same detection work), /ingest gets raw records.
  const zeek = NORMALIZERS.get('network-monitor')!;
  const asEvent = (k: number) => {
    const r = zeek.normalize(zeekConn(k), { ingestedAt: '2026-11-22T10:00:00.000Z', logType: 'conn' });
    return r.ok ? r.events[0] : undefined;
  };
  // 500 per request: 1000 normalized events would pass the 1 MiB body limit.
  const events = Array.from({ length: 200 }, (_, b) =>
    JSON.stringify(Array.from({ length: 500 }, (_, i) => asEvent(100_000 + b * 500 + i))),
  );
  const conn = Array.from({ length: 200 }, (_, b) =>
    JSON.stringify(Array.from({ length: 500 }, (_, i) => zeekConn(b * 500 + i))),
  );
  const viaEvents = load(`${serve.url}/api/v1/events`, events, 500, { token: t });
  const viaIngest = load(`${serve.url}/api/v1/ingest/network-monitor?logType=conn`, conn, 500, { token: t });
  await stopChild(serve.proc);
  figures.push({
    name: 'POST /api/v1/events, 500 normalized Zeek conn events a request',
    value: Math.round(viaEvents.eventsPerSecond),
    unit: 'events/s',
    note: `p99 ${viaEvents.p99ms.toFixed(0)} ms`,
  });
  figures.push({
    name: 'POST /api/v1/ingest/network-monitor?logType=conn, 500 records a request',
    value: Math.round(viaIngest.eventsPerSecond),
    unit: 'events/s',
    note: `p99 ${viaIngest.p99ms.toFixed(0)} ms`,
  });
  figures.push({
    name: 'raw Zeek conn ingest as a share of /api/v1/events',
    value: Math.round((viaIngest.eventsPerSecond / viaEvents.eventsPerSecond) * 1000) / 10,
    unit: '%',
  });
  return figures;
}
