import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { hostname } from 'node:os';
import type { ExportDestination } from './config.js';
import type { ExportItem } from './items.js';
import type { Sender, SendResult } from './senders.js';

type SyslogDestination = Extract<ExportDestination, { kind: 'syslog' }>;

/** RFC 5424 severities for Sigma levels (facility 13, log audit). */
const LEVEL_SEVERITY: Readonly<Record<string, number>> = { informational: 6, low: 5, medium: 4, high: 3, critical: 2 };
const FACILITY = 13;
/** The private enterprise number RFC 5612 reserves for documentation, naming Vigil's structured data. */
const SD_ID = 'vigil@32473';

const sdEscape = (s: string) => s.replace(/["\\\]]/g, (c) => `\\${c}`);
const header = (s: string, max: number) => s.replace(/[^\x21-\x7e]/g, '').slice(0, max) || '-';

/** The item as docs/export.md describes it, keyed as the webhook sends it: id, seq, type, at, actor when any, data. */
function itemBody(item: ExportItem): ExportItem {
  const { id, seq, type, at, actor, data } = item;
  return { id, seq, type, at, ...(actor ? { actor } : {}), data };
}

/** One item as an RFC 5424 message (UTF-8 JSON body after a BOM), octet-counted per RFC 6587. */
export function syslogFrame(item: ExportItem, origin: string, host: string): Buffer {
  const level = (item.data as { level?: unknown } | null)?.level;
  const severity = typeof level === 'string' ? (LEVEL_SEVERITY[level] ?? 6) : 6;
  const sd = `[${SD_ID} id="${sdEscape(item.id)}" seq="${item.seq}" origin="${sdEscape(origin)}"]`;
  const msg = Buffer.concat([
    Buffer.from(
      `<${FACILITY * 8 + severity}>1 ${item.at} ${header(host, 255)} vigil - ${header(item.type, 32)} ${sd} `,
    ),
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from(JSON.stringify(itemBody(item))),
  ]);
  return Buffer.concat([Buffer.from(`${msg.length} `), msg]);
}

/**
 * A syslog sender over one long-lived TCP or TLS connection (RFC 5425), reopened after any error.
 * Syslog has no acknowledgement: a batch counts as delivered once the socket has taken every byte.
 */
export function createSyslogSender(d: SyslogDestination, origin: string, ca: string | undefined): Sender {
  let socket: Socket | undefined;
  const host = hostname();
  const open = (): Promise<Socket> =>
    new Promise((resolve, reject) => {
      const opts = { host: d.host, port: d.port, timeout: d.timeoutSeconds * 1000 };
      const s: Socket =
        d.transport === 'tls'
          ? tlsConnect({ ...opts, servername: d.host, ...(ca !== undefined ? { ca } : {}) }, () => resolve(s))
          : netConnect(opts, () => resolve(s));
      s.once('error', reject);
      s.once('timeout', () => s.destroy(new Error(`no connection within ${d.timeoutSeconds} s`)));
    });
  const drop = () => {
    socket?.destroy();
    socket = undefined;
  };
  return {
    async send(items): Promise<SendResult> {
      try {
        if (!socket || socket.destroyed) {
          socket = await open();
          socket.on('error', drop);
          socket.on('close', drop);
          socket.setTimeout(0);
        }
        const s = socket;
        const data = Buffer.concat(items.map((i) => syslogFrame(i, origin, host)));
        await new Promise<void>((resolve, reject) => s.write(data, (err) => (err ? reject(err) : resolve())));
        return { ok: true };
      } catch (err) {
        drop();
        return { ok: false, error: (err as Error).message || String(err) };
      }
    },
    close: drop,
  };
}
