import * as v from 'valibot';
import { CATEGORIES } from '../../events/normalized-event.js';

/** What a destination can carry. */
export const EXPORT_CARRIES = ['alerts', 'incidents', 'events'] as const;

const AbsolutePath = v.pipe(
  v.string(),
  v.minLength(2),
  v.maxLength(4096),
  v.check((p) => p.startsWith('/'), 'expected an absolute path'),
);
const Short = v.pipe(v.string(), v.minLength(1), v.maxLength(256));
const ShortList = v.pipe(v.array(Short), v.minLength(1), v.maxLength(256));
const Seconds = (min: number, max: number, fallback: number) =>
  v.optional(v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max)), fallback);

/** http:// is refused unless the host is this machine: alerts and evidence never cross a network in clear. */
const LOOPBACK_HOSTS = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;
const DeliveryUrl = v.pipe(
  v.string(),
  v.maxLength(2048),
  v.url('expected a URL'),
  v.check((u) => {
    const url = new URL(u);
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.test(url.hostname));
  }, 'expected an https:// URL (http:// only to a loopback address)'),
  v.check(
    (u) => new URL(u).username === '' && new URL(u).password === '',
    'credentials do not belong in a URL: use headersFile',
  ),
);

/**
 * Which normalized events an `events` destination carries; absent lists mean all (Vigil's own access events only when
 * `adapters` names `vigil`).
 */
export const ExportEventFilterSchema = v.strictObject({
  categories: v.optional(v.pipe(v.array(v.picklist(CATEGORIES)), v.minLength(1))),
  classes: v.optional(ShortList),
  adapters: v.optional(ShortList),
});

const common = {
  /** Names the destination in status, metrics, the cursor file and the log. */
  name: v.pipe(
    v.string(),
    v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, 'expected lower-case letters, digits, - and _ (at most 64)'),
  ),
  carries: v.pipe(v.array(v.picklist(EXPORT_CARRIES)), v.minLength(1), v.maxLength(3)),
  events: v.optional(ExportEventFilterSchema),
  /** Raw records and `rawReference` leave only when this is true (spec 1: raw evidence stays local). */
  includeRaw: v.optional(v.boolean(), false),
  /** Items per request (webhook, OTLP) or per write burst (syslog). */
  batchSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 100),
  /** Past this many undelivered log records the destination is marked failing and an alert is raised. */
  maxLagRecords: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1_000_000_000)), 100_000),
  /** With records waiting and no delivery for this long, the destination is marked failing. */
  failingAfterSeconds: Seconds(1, 86_400, 300),
  /** How long one request or connection attempt may take. */
  timeoutSeconds: Seconds(1, 300, 10),
  /** A PEM file of CA certificates to trust for this destination (a private CA). */
  caFile: v.optional(AbsolutePath),
};

/** A webhook: JSON over HTTPS, every request signed with HMAC-SHA256 (docs/export.md). */
export const WebhookDestinationSchema = v.strictObject({
  kind: v.literal('webhook'),
  ...common,
  url: DeliveryUrl,
  /** The HMAC secret: a 0600 file in a 0700 folder. */
  secretFile: AbsolutePath,
  /** Extra request headers (an Authorization header, say): a 0600 JSON object file. */
  headersFile: v.optional(AbsolutePath),
});

/** OTLP/HTTP logs (JSON): any OpenTelemetry Collector, SIEM or Vigil that speaks OTLP receives them. */
export const OtlpDestinationSchema = v.strictObject({
  kind: v.literal('otlp'),
  ...common,
  /** The full logs URL, such as `https://collector:4318/v1/logs` or `https://vigil/api/v1/otlp/v1/logs`. */
  url: DeliveryUrl,
  headersFile: v.optional(AbsolutePath),
});

/** RFC 5424 syslog over TCP (loopback only) or TLS (RFC 5425), octet-counted (RFC 6587). */
export const SyslogDestinationSchema = v.pipe(
  v.strictObject({
    kind: v.literal('syslog'),
    ...common,
    host: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
    port: v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535)),
    transport: v.optional(v.picklist(['tls', 'tcp']), 'tls'),
  }),
  v.check(
    (d) => d.transport === 'tls' || LOOPBACK_HOSTS.test(d.host) || d.host === '::1',
    'transport tcp is plain text: only to a loopback host (use tls)',
  ),
);

/** One export destination. */
export const ExportDestinationSchema = v.variant('kind', [
  WebhookDestinationSchema,
  OtlpDestinationSchema,
  SyslogDestinationSchema,
]);

/** The `export` section: absent or empty, nothing leaves the machine. */
export const ExportConfigSchema = v.strictObject({
  destinations: v.optional(
    v.pipe(
      v.array(ExportDestinationSchema),
      v.maxLength(32),
      v.check((ds) => new Set(ds.map((d) => d.name)).size === ds.length, 'destination names must be unique'),
    ),
    [],
  ),
});

/** One validated destination. */
export type ExportDestination = v.InferOutput<typeof ExportDestinationSchema>;
/** The validated `export` section. */
export type ExportConfig = v.InferOutput<typeof ExportConfigSchema>;

/** Where a destination delivers, as status and the log show it. */
export function targetOf(d: ExportDestination): string {
  return d.kind === 'syslog' ? `${d.host.includes(':') ? `[${d.host}]` : d.host}:${d.port}` : d.url;
}
