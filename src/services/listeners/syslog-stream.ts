import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { cidrSet, normalizeAddress } from '../../kernel/cidr.js';
import type { Metrics } from '../metrics/metrics.js';
import { tokenBucket } from './rate-limit.js';
import type { SyslogListenerConfig } from './syslog-config.js';
import { frameDecoder, type Frame } from './syslog-framing.js';
import type { SyslogIntake } from './syslog-intake.js';
import type { ListenerRecord } from './syslog-rejection.js';

/** A listening syslog server: its bound address and how to stop it. */
export interface RunningListener {
  readonly name: string;
  readonly protocol: 'tcp' | 'tls' | 'udp';
  readonly address: AddressInfo;
  stop(): Promise<void>;
}

/** What a listener needs besides its configuration. */
export interface ListenerDeps {
  readonly intake: SyslogIntake;
  readonly metrics?: Metrics;
  readonly log: (line: Record<string, unknown>) => void;
}

/** A subject as `CN=web-01,O=Example` in the order the certificate gives it. */
function subjectText(subject: Record<string, string | string[]> | undefined): string {
  if (!subject) return '';
  return Object.entries(subject)
    .flatMap(([k, v]) => (Array.isArray(v) ? v : [v]).map((x) => `${k}=${x}`))
    .join(',');
}

/** Whether a TLS peer's certificate is on the listener's allowlist (when it has one). */
function clientAllowed(socket: TLSSocket, tls: NonNullable<SyslogListenerConfig['tls']>): boolean {
  if (tls.allowedClientSubjects.length === 0 && tls.allowedClientFingerprints.length === 0) return true;
  const cert = socket.getPeerCertificate();
  if (!cert || Object.keys(cert).length === 0) return false;
  const fingerprint = (cert.fingerprint256 ?? '').replace(/:/g, '').toLowerCase();
  if (tls.allowedClientFingerprints.includes(fingerprint)) return true;
  // A subject counts only when the certificate chains to the configured CA.
  if (!socket.authorized) return false;
  const subject = subjectText(cert.subject as unknown as Record<string, string | string[]>);
  const cn = (cert.subject as unknown as Record<string, string> | undefined)?.['CN'];
  return tls.allowedClientSubjects.some((s) => s === subject || (cn !== undefined && s === `CN=${cn}`));
}

/**
 * A TCP or TLS syslog listener (RFC 6587 framing, RFC 5425): refuses peers outside
 * `allowedSources` and connections past `maxConnections`, frames each connection's bytes, limits
 * its message rate by pausing it, closes it when idle, and hands every message to the intake.
 */
export function startStreamListener(config: SyslogListenerConfig, deps: ListenerDeps): Promise<RunningListener> {
  const allowed = cidrSet(config.allowedSources);
  const sockets = new Set<Socket>();
  const labels = { listener: config.name };
  const refuse = (socket: Socket, reason: string) => {
    deps.metrics?.syslogConnectionsRefused.inc({ ...labels, reason });
    socket.destroy();
  };

  /**
   * The peer of a new connection when it may stay: its source, the connection bound and its certificate are checked.
   */
  function admit(socket: Socket): string | undefined {
    const peer = normalizeAddress(socket.remoteAddress ?? '');
    const refusal = !allowed.has(peer)
      ? 'source'
      : sockets.size >= config.maxConnections
        ? 'max_connections'
        : config.tls && !clientAllowed(socket as TLSSocket, config.tls)
          ? 'client_certificate'
          : undefined;
    if (refusal) {
      refuse(socket, refusal);
      return undefined;
    }
    return peer;
  }

  function accept(socket: Socket): void {
    const peer = admit(socket);
    if (peer === undefined) return;
    sockets.add(socket);
    deps.metrics?.syslogConnections.inc(labels);
    socket.once('close', () => {
      sockets.delete(socket);
      deps.metrics?.syslogConnections.dec(labels);
    });
    socket.on('error', () => socket.destroy());
    socket.setTimeout(config.idleTimeoutSeconds * 1000, () => socket.destroy());
    const decoder = frameDecoder(config.maxMessageBytes);
    const bucket = tokenBucket(config.messagesPerSecond, Date.now());
    const base = { peer, listener: config.name, transport: config.protocol === 'tls' ? 'tls' : 'tcp' } as const;
    socket.on('data', (chunk: Buffer) => {
      let room = true;
      let waitMs = 0;
      const receivedAt = new Date().toISOString();
      for (const frame of decoder.push(chunk)) {
        if (frame.kind === 'fatal') {
          deps.metrics?.syslogMessages.inc({ ...labels, outcome: 'framing_error' });
          deps.log({
            level: 'warn',
            msg: 'syslog connection closed: unreadable framing',
            listener: config.name,
            peer,
            reason: frame.reason,
          });
          socket.destroy();
          return;
        }
        waitMs = Math.max(waitMs, bucket.take(Date.now()));
        room = take(frame, { ...base, receivedAt }) && room;
      }
      if (waitMs > 0 || !room) pause(socket, waitMs, room);
    });
  }

  /** Hands one frame to the intake (an oversized one as a rejection); false once the intake is full. */
  function take(frame: Exclude<Frame, { kind: 'fatal' }>, base: Omit<ListenerRecord, 'message'>): boolean {
    if (frame.kind === 'message') return deps.intake.add({ ...base, message: frame.bytes.toString('utf8') });
    deps.metrics?.syslogMessages.inc({ ...labels, outcome: 'oversized' });
    return deps.intake.add(
      { ...base, message: frame.head.toString('utf8'), length: frame.length },
      {
        reason: 'too_large',
        error: `frame of ${frame.length} bytes exceeds maxMessageBytes ${config.maxMessageBytes}`,
      },
    );
  }

  /** Back-pressure instead of loss: past the rate, or while the intake is full, a connection stops being read. */
  function pause(socket: Socket, waitMs: number, room: boolean): void {
    socket.pause();
    if (waitMs > 0) deps.metrics?.syslogMessages.inc({ ...labels, outcome: 'rate_limited' });
    const resume = () => {
      if (!socket.destroyed) socket.resume();
    };
    if (room) setTimeout(resume, waitMs).unref();
    else deps.intake.whenRoom(() => setTimeout(resume, waitMs).unref());
  }

  let server: Server;
  if (config.tls) {
    const tls = config.tls;
    const requestCert = tls.clientCaFile !== undefined || tls.allowedClientFingerprints.length > 0;
    server = createTlsServer(
      {
        cert: readFileSync(tls.certFile),
        key: readFileSync(tls.keyFile),
        ...(tls.clientCaFile ? { ca: readFileSync(tls.clientCaFile) } : {}),
        requestCert,
        // With a CA every client must chain to it; a fingerprint allowlist alone admits self-signed certificates it
        // names.
        rejectUnauthorized: tls.clientCaFile !== undefined && tls.allowedClientFingerprints.length === 0,
        minVersion: 'TLSv1.2',
        handshakeTimeout: 30_000,
      },
      accept,
    );
    server.on('tlsClientError', () =>
      deps.metrics?.syslogConnectionsRefused.inc({ ...labels, reason: 'tls_handshake' }),
    );
  } else server = createServer(accept);

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve({
        name: config.name,
        protocol: config.protocol,
        address: server.address() as AddressInfo,
        stop: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            for (const s of sockets) s.destroy();
          }),
      });
    });
  });
}
