import * as v from 'valibot';
import { parseCidr } from '../../kernel/cidr.js';

const Cidr = v.pipe(
  v.string(),
  v.check((s) => parseCidr(s) !== undefined, 'expected a CIDR range such as 10.0.0.0/8 or fd00::/8'),
);
const PathText = v.pipe(v.string(), v.minLength(1), v.maxLength(4096));
const Count = (max: number) => v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(max));
/**
 * A SHA-256 certificate fingerprint as hex, with or without colons (what `openssl x509 -fingerprint -sha256` prints).
 */
const Fingerprint = v.pipe(
  v.string(),
  v.transform((s) => s.replace(/:/g, '').toLowerCase()),
  v.regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 fingerprint (64 hex digits, colons allowed)'),
);

/** TLS of a `tls` listener (RFC 5425): the server's certificate, and optionally who may connect. */
export const SyslogTlsSchema = v.pipe(
  v.strictObject({
    certFile: PathText,
    keyFile: PathText,
    /** CA bundle that client certificates must chain to; with it, a client without a valid certificate is refused. */
    clientCaFile: v.optional(PathText),
    /**
     * Client certificate subjects (`CN=web-01`, or the full `CN=web-01,O=Example` in RFC 2253 order) allowed to
     * connect.
     */
    allowedClientSubjects: v.optional(
      v.pipe(v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(1024))), v.maxLength(1024)),
      [],
    ),
    /** SHA-256 fingerprints of client certificates allowed to connect (self-signed ones too, RFC 5425 5.2). */
    allowedClientFingerprints: v.optional(v.pipe(v.array(Fingerprint), v.maxLength(1024)), []),
  }),
  // A subject proves nothing unless a CA vouches for it; a fingerprint does by itself.
  v.check(
    (t) => t.allowedClientSubjects.length === 0 || t.clientCaFile !== undefined,
    'allowedClientSubjects needs clientCaFile (a subject is only as good as the CA that signed it)',
  ),
);

/** One syslog listener (docs/shippers.md, "Syslog"). */
export const SyslogListenerSchema = v.pipe(
  v.strictObject({
    /** A short name, used in rejection records, metrics labels and log lines. */
    name: v.pipe(
      v.string(),
      v.regex(/^[a-z0-9][a-z0-9_-]{0,31}$/, 'expected a short name: lower-case letters, digits, - and _ (at most 32)'),
    ),
    /** `tcp` (RFC 6587 octet-counting or LF framing), `tls` (RFC 5425) or `udp` (RFC 5426). */
    protocol: v.picklist(['tcp', 'tls', 'udp']),
    host: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255)), '127.0.0.1'),
    port: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535)),
    /** Peers allowed to send; others are refused at connect (TCP, TLS) or ignored and counted (UDP). */
    allowedSources: v.optional(v.pipe(v.array(Cidr), v.maxLength(1024)), ['127.0.0.0/8', '::1/128']),
    /** The largest message accepted; a larger frame is skipped and kept as a rejection record. */
    maxMessageBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(480), v.maxValue(1024 * 1024)), 16 * 1024),
    /**
     * Messages per second one connection (or, for UDP, one source address) may send; past it TCP is paused and UDP is
     * dropped and counted.
     */
    messagesPerSecond: v.optional(Count(1_000_000), 2000),
    /** Open connections at once (TCP, TLS); past it new connections are closed at once. */
    maxConnections: v.optional(Count(100_000), 256),
    /** A connection that sends nothing for this long is closed (slow or stuck senders). */
    idleTimeoutSeconds: v.optional(Count(86_400), 300),
    tls: v.optional(SyslogTlsSchema),
  }),
  v.check(
    (l) => (l.protocol === 'tls') === (l.tls !== undefined),
    'a tls listener needs `tls` (certFile, keyFile), and only a tls listener takes it',
  ),
  v.check(
    (l) => l.protocol !== 'udp' || l.maxMessageBytes <= 65_507,
    'a udp listener cannot receive a message larger than 65507 bytes',
  ),
);

/** `syslog.listeners`: names must be unique. */
export const SyslogListenersSchema = v.pipe(
  v.array(SyslogListenerSchema),
  v.maxLength(32),
  v.check((ls) => new Set(ls.map((l) => l.name)).size === ls.length, 'listener names must be unique'),
);

/** One validated listener. */
export type SyslogListenerConfig = v.InferOutput<typeof SyslogListenerSchema>;

/** How long messages gather before they go to the writer as one command. */
export const SYSLOG_BATCH_MS = 200;
