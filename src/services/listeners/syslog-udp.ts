import { createSocket } from 'node:dgram';
import { isIPv6, type AddressInfo } from 'node:net';
import { cidrSet, normalizeAddress } from '../../kernel/cidr.js';
import { tokenBucket, type TokenBucket } from './rate-limit.js';
import type { SyslogListenerConfig } from './syslog-config.js';
import { HEAD_BYTES } from './syslog-framing.js';
import type { ListenerDeps, RunningListener } from './syslog-stream.js';

/** Source addresses whose rate is tracked at once; past it the table starts afresh (bounded memory). */
const MAX_TRACKED_SOURCES = 10_000;

/**
 * A UDP syslog listener (RFC 5426): one message per datagram. A datagram cannot be slowed down,
 * so one from outside `allowedSources`, past its source's rate or while the intake is full is
 * dropped and counted in the metrics (never silently); an oversized one is kept as a rejection record.
 */
export function startUdpListener(config: SyslogListenerConfig, deps: ListenerDeps): Promise<RunningListener> {
  const allowed = cidrSet(config.allowedSources);
  const labels = { listener: config.name };
  let buckets = new Map<string, TokenBucket>();
  const socket = createSocket({ type: isIPv6(config.host) ? 'udp6' : 'udp4', recvBufferSize: 4 * 1024 * 1024 });
  const dropped = (outcome: string) => deps.metrics?.syslogMessages.inc({ ...labels, outcome });

  socket.on('message', (msg, rinfo) => {
    const peer = normalizeAddress(rinfo.address);
    if (!allowed.has(peer)) return dropped('source_refused');
    let bucket = buckets.get(peer);
    if (!bucket) {
      if (buckets.size >= MAX_TRACKED_SOURCES) buckets = new Map();
      buckets.set(peer, (bucket = tokenBucket(config.messagesPerSecond, Date.now())));
    }
    if (bucket.take(Date.now()) > 0) return dropped('rate_limited');
    if (!deps.intake.hasRoom()) return dropped('intake_full');
    const base = { receivedAt: new Date().toISOString(), peer, listener: config.name, transport: 'udp' } as const;
    if (msg.length > config.maxMessageBytes) {
      dropped('oversized');
      deps.intake.add(
        { ...base, message: msg.subarray(0, HEAD_BYTES).toString('utf8'), length: msg.length },
        {
          reason: 'too_large',
          error: `datagram of ${msg.length} bytes exceeds maxMessageBytes ${config.maxMessageBytes}`,
        },
      );
      return;
    }
    // Some senders end a datagram with LF (or NUL); it is not part of the message.
    let end = msg.length;
    while (end > 0 && (msg[end - 1] === 0x0a || msg[end - 1] === 0x0d || msg[end - 1] === 0x00)) end--;
    deps.intake.add({ ...base, message: msg.subarray(0, end).toString('utf8') });
  });
  socket.on('error', (err) =>
    deps.log({ level: 'error', msg: 'syslog udp listener error', listener: config.name, error: err.message }),
  );

  return new Promise((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(config.port, config.host, () => {
      socket.off('error', reject);
      resolve({
        name: config.name,
        protocol: 'udp',
        address: socket.address() as AddressInfo,
        stop: () => new Promise<void>((done) => socket.close(() => done())),
      });
    });
  });
}
