import type { NormalizedEvent } from '../../events/normalized-event.js';
import {
  type EventValue,
  eventDomain,
  eventEmail,
  eventHashOf,
  eventHost,
  eventIp,
  eventUrl,
  MAX_VALUE_LENGTH,
  sysmonHashes,
  zeekHttpUrl,
} from './event-values.js';
import type { IndicatorType } from './types.js';

/**
 * Which fields of a NormalizedEvent hold the values indicators name (issue 60, "a documented table"): the
 * schema's own fields for every source, and each normalizer's attributes by their keys as it writes them. Only
 * structured fields are read: a syslog or journal message's free text is not scanned (the normalizers already
 * lift its addresses into `src_ip`, `dst_ip`, `rhost` and the endpoints).
 */

/** How a field's value is read (event-values.ts). */
export type FieldHolds =
  'address' | 'host' | 'domain' | 'url' | 'zeek-http-url' | 'md5' | 'sha1' | 'sha256' | 'sysmon-hashes' | 'email';

/** One row of the table: a field, whose events carry it, and what it holds. */
export interface EventField {
  /** The event's `source.adapter`, or `*` for every event. */
  readonly adapter: string;
  /** The attribute's key as the normalizer writes it, or a schema field (`sourceEndpoint.ip`, `entityKeys`). */
  readonly field: string;
  readonly holds: FieldHolds;
  /** Where the field comes from, for the docs. */
  readonly note: string;
}

const zeek = (field: string, holds: FieldHolds, note: string): EventField => ({
  adapter: 'network-monitor',
  field,
  holds,
  note,
});
const otel = (field: string, holds: FieldHolds, note: string): EventField => ({
  adapter: 'opentelemetry-log',
  field,
  holds,
  note,
});
const linuxMessages = (field: string, holds: FieldHolds, note: string): EventField[] =>
  ['syslog-rfc5424', 'linux-journal'].map((adapter) => ({ adapter, field, holds, note }));

/** The table the docs render (docs/intel.md, "Matching"): read in this order, the first field of a value names it. */
export const EVENT_FIELDS: readonly EventField[] = [
  zeek('id.orig_h', 'address', 'Zeek: the originator of every connection-based log (conn, dns, http, files, ...)'),
  zeek('id.resp_h', 'address', 'Zeek: the responder'),
  zeek('query', 'domain', 'Zeek dns: the name asked'),
  zeek('answers', 'host', 'Zeek dns: each answer, an address or a name (CNAME)'),
  zeek('host+uri', 'zeek-http-url', 'Zeek http: `http://` + `host` + `uri`, the URL requested'),
  zeek('host', 'host', 'Zeek http: the Host header'),
  zeek('referrer', 'url', 'Zeek http: the Referer header'),
  zeek('md5', 'md5', "Zeek files: the file's MD5 (when the MD5 analyzer ran)"),
  zeek('sha1', 'sha1', 'Zeek files: SHA1'),
  zeek('sha256', 'sha256', 'Zeek files: SHA256'),
  zeek('tx_hosts', 'address', 'Zeek files (before 5.0): the senders'),
  zeek('rx_hosts', 'address', 'Zeek files (before 5.0): the receivers'),
  zeek('server_name', 'domain', 'Zeek ssl: the SNI'),
  zeek('san.dns', 'domain', "Zeek x509: the certificate's DNS names"),
  zeek('mailfrom', 'email', 'Zeek smtp: MAIL FROM'),
  zeek('rcptto', 'email', 'Zeek smtp: RCPT TO'),
  zeek('from', 'email', 'Zeek smtp: the From header (`"Name" <a@b>`)'),
  zeek('to', 'email', 'Zeek smtp: the To header'),
  zeek('reply_to', 'email', 'Zeek smtp: the Reply-To header'),
  zeek('path', 'address', 'Zeek smtp: the relays the message passed'),
  ...linuxMessages('src_ip', 'address', 'sshd, pam, kernel firewall lines: the peer'),
  ...linuxMessages('dst_ip', 'address', 'kernel firewall lines: the destination'),
  ...linuxMessages('src_host', 'host', "sshd with UseDNS: the peer's name"),
  ...linuxMessages('rhost', 'host', 'pam: the remote host'),
  otel('client.address', 'host', 'OpenTelemetry semantic conventions: the client'),
  otel('server.address', 'host', 'the server'),
  otel('source.address', 'host', 'the source'),
  otel('destination.address', 'host', 'the destination'),
  otel('network.peer.address', 'host', 'the peer'),
  otel('url.full', 'url', 'the absolute URL'),
  otel('url.original', 'url', 'the URL as the client sent it'),
  otel('dns.question.name', 'domain', 'the name asked'),
  otel('user.email', 'email', "the user's e-mail address"),
  otel('SourceIp', 'address', 'Windows (Sysmon 3): the source'),
  otel('DestinationIp', 'address', 'Windows (Sysmon 3): the destination'),
  otel('DestinationHostname', 'host', "Windows (Sysmon 3): the destination's name"),
  otel('QueryName', 'domain', 'Windows (Sysmon 22): the name asked'),
  otel('Hashes', 'sysmon-hashes', 'Windows (Sysmon 1, 6, 7, 15, 23, 26): `MD5=...,SHA256=...`'),
  { adapter: '*', field: 'sourceEndpoint.ip', holds: 'address', note: 'every source (mesh-vpn-logs flows: `src`)' },
  { adapter: '*', field: 'sourceEndpoint.host', holds: 'host', note: 'every source' },
  { adapter: '*', field: 'destinationEndpoint.ip', holds: 'address', note: 'every source (mesh-vpn-logs: `dst`)' },
  { adapter: '*', field: 'destinationEndpoint.host', holds: 'host', note: 'every source' },
  { adapter: '*', field: 'entityKeys', holds: 'host', note: '`ip:`, `domain:` and dotted `host:` keys' },
];

/** One value an event holds, where it holds it. */
export interface Observable {
  readonly field: string;
  readonly type: IndicatorType;
  readonly value: string;
}

/** The most values read from one event: past it the rest are not matched (an x509 with 500 names). */
export const MAX_OBSERVABLES = 64;
/** The most items read from one array field (`answers`, `san.dns`, `rcptto`). */
const MAX_ITEMS = 32;

const BY_ADAPTER = new Map<string, EventField[]>();
for (const row of EVENT_FIELDS) {
  if (row.adapter === '*') continue;
  BY_ADAPTER.set(row.adapter, [...(BY_ADAPTER.get(row.adapter) ?? []), row]);
}

/** The values a field holds, read as its row says. */
function valuesOf(holds: FieldHolds, raw: string): Array<EventValue | undefined> {
  switch (holds) {
    case 'address':
      return [eventIp(raw)];
    case 'host':
      return [eventHost(raw)];
    case 'domain':
      return [eventDomain(raw)];
    case 'url':
    case 'zeek-http-url': {
      const url = eventUrl(raw);
      return url ? [url.url, url.host] : [];
    }
    case 'md5':
    case 'sha1':
    case 'sha256':
      return [eventHashOf(holds, raw)];
    case 'sysmon-hashes':
      return sysmonHashes(raw);
    case 'email':
      return [eventEmail(raw)];
    default:
      return exhaustive(holds);
  }
}

function exhaustive(x: never): never {
  throw new Error(`unexpected field kind ${String(x)}`);
}

/** Strings of a field's value: itself, or the first MAX_ITEMS strings of an array, each within the length bound. */
function strings(value: unknown): string[] {
  const list = Array.isArray(value) ? value.slice(0, MAX_ITEMS) : [value];
  return list.filter((s): s is string => typeof s === 'string' && s !== '' && s.length <= MAX_VALUE_LENGTH);
}

/** An own property of a free object (never one inherited from Object.prototype). */
function own(object: unknown, key: string): unknown {
  return object !== null && typeof object === 'object' && Object.hasOwn(object, key)
    ? (object as Record<string, unknown>)[key]
    : undefined;
}

/** The entity keys that name values: `ip:`, `domain:`, and `host:` when the name has a dot (a bare host name
 * like `bastion-01` is a machine's own name, which no feed lists). */
function entityKeyValue(key: string): EventValue | undefined {
  const colon = key.indexOf(':');
  const kind = key.slice(0, colon);
  const rest = key.slice(colon + 1);
  if (kind === 'ip') return eventIp(rest);
  if (kind === 'domain' || (kind === 'host' && rest.includes('.'))) return eventHost(rest);
  return undefined;
}

/**
 * The values an event holds that indicators may name, in the table's order, normalized and deduplicated by type
 * and value (the first field that holds one names it), at most MAX_OBSERVABLES.
 */
export function observablesOf(event: NormalizedEvent): Observable[] {
  const out: Observable[] = [];
  const seen = new Set<string>();
  const push = (field: string, v: EventValue | undefined): void => {
    if (v === undefined || out.length >= MAX_OBSERVABLES) return;
    const key = `${v.type}\u0000${v.value}`;
    if (seen.has(key)) return;
    seen.add(key);
    out.push({ field, type: v.type, value: v.value });
  };
  const attributes = event.attributes;
  for (const row of BY_ADAPTER.get(event.source.adapter) ?? []) {
    if (row.holds === 'zeek-http-url') {
      const url = zeekHttpUrl(own(attributes, 'host'), own(attributes, 'uri'));
      if (url) for (const v of [url.url, url.host]) push(row.field, v);
      continue;
    }
    for (const raw of strings(own(attributes, row.field))) for (const v of valuesOf(row.holds, raw)) push(row.field, v);
  }
  for (const side of ['sourceEndpoint', 'destinationEndpoint'] as const) {
    const endpoint = event[side];
    for (const raw of strings(own(endpoint, 'ip'))) push(`${side}.ip`, eventIp(raw));
    for (const raw of strings(own(endpoint, 'host'))) push(`${side}.host`, eventHost(raw));
  }
  for (const key of event.entityKeys) {
    if (out.length >= MAX_OBSERVABLES) break;
    push('entityKeys', entityKeyValue(key));
  }
  return out;
}
