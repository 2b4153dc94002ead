import type { NormalizedEvent } from '../events/normalized-event.js';
import type { Accessor } from './logsources.js';
import { SECURITY_4688_FIELDS } from './windows-logsources.js';

/**
 * Per-logsource field tables: where Vigil keeps each Sigma taxonomy field for a logsource (firewall
 * and dns over Zeek, proxy and webserver over Zeek http, auditd over the journal, Windows
 * process_creation over Security 4688). logsources.ts picks the table for each logsource.
 */

/** The value at a path of own keys inside plain objects (an array or a missing key on the way: undefined). */
export function valueAt(root: unknown, keys: readonly string[]): unknown {
  let value = root;
  for (const key of keys) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

function path(...keys: string[]): Accessor {
  return (event) => valueAt(event, keys);
}

function firstText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/**
 * A Zeek conn record is not a firewall verdict; a connection the monitor saw established was evidently
 * not blocked, anything else is unknown. Kernel firewall lines carry their own `blocked` attribute.
 */
const zeekBlocked: Accessor = (event) =>
  event.source.adapter === 'network-monitor' && event.outcome === 'success' ? 'false' : undefined;

/** Sigma's generic firewall taxonomy over Zeek conn and kernel netfilter events. */
export const FIREWALL_FIELDS: Record<string, Accessor> = {
  src_ip: path('sourceEndpoint', 'ip'),
  dst_ip: path('destinationEndpoint', 'ip'),
  src_port: path('sourceEndpoint', 'port'),
  dst_port: path('destinationEndpoint', 'port'),
  username: path('actor', 'user'),
  blocked: zeekBlocked,
};

/** Sigma's generic dns taxonomy over Zeek dns.log (`query` is already Zeek's name). */
export const DNS_FIELDS: Record<string, Accessor> = {
  answer: path('attributes', 'answers'),
  record_type: path('attributes', 'qtype_name'),
};

function uriPart(part: 'stem' | 'query' | 'extension'): Accessor {
  return (event) => {
    const uri = event.attributes['uri'];
    if (typeof uri !== 'string') return undefined;
    const q = uri.indexOf('?');
    const stem = q < 0 ? uri : uri.slice(0, q);
    if (part === 'stem') return stem;
    if (part === 'query') return q < 0 ? undefined : uri.slice(q + 1);
    const name = stem.slice(stem.lastIndexOf('/') + 1);
    const dot = name.lastIndexOf('.');
    return dot < 0 ? undefined : name.slice(dot + 1);
  };
}

/** Zeek http.log under Sigma's proxy taxonomy (W3C extended log names). */
export const PROXY_FIELDS: Record<string, Accessor> = {
  'c-uri': path('attributes', 'uri'),
  'c-uri-stem': uriPart('stem'),
  'c-uri-query': uriPart('query'),
  'c-uri-extension': uriPart('extension'),
  'c-useragent': path('attributes', 'user_agent'),
  'cs-host': path('attributes', 'host'),
  'r-dns': path('attributes', 'host'),
  'cs-method': path('attributes', 'method'),
  'cs-referrer': path('attributes', 'referrer'),
  'cs-version': path('attributes', 'version'),
  'sc-status': path('attributes', 'status_code'),
  'cs-bytes': path('attributes', 'request_body_len'),
  'sc-bytes': path('attributes', 'response_body_len'),
  src_ip: path('sourceEndpoint', 'ip'),
  dst_ip: path('destinationEndpoint', 'ip'),
};

/** Zeek http.log under Sigma's webserver taxonomy. */
export const WEBSERVER_FIELDS: Record<string, Accessor> = {
  ...PROXY_FIELDS,
  'cs-uri-stem': uriPart('stem'),
  'cs-uri-query': uriPart('query'),
  'cs-user-agent': path('attributes', 'user_agent'),
  'cs-referer': path('attributes', 'referrer'),
  'cs-username': path('attributes', 'username'),
  'c-ip': path('sourceEndpoint', 'ip'),
  's-ip': path('destinationEndpoint', 'ip'),
};

const AUDIT_PAIR = /([A-Za-z0-9_-]{1,64})=("[^"]*"|\S*)/g;
const auditCache = new WeakMap<NormalizedEvent, Record<string, string>>();

/** The `key=value` pairs of an audit record as the journal keeps it (`MESSAGE`), parsed once per event. */
function auditPairs(event: NormalizedEvent): Record<string, string> {
  let pairs = auditCache.get(event);
  if (pairs) return pairs;
  pairs = Object.create(null) as Record<string, string>;
  const message = firstText(event.attributes['MESSAGE']) ?? '';
  for (const m of message.slice(0, 16_384).matchAll(AUDIT_PAIR)) {
    const value = m[2]!;
    if (!(m[1]! in pairs)) pairs[m[1]!] = value.startsWith('"') ? value.slice(1, -1) : value;
  }
  auditCache.set(event, pairs);
  return pairs;
}

/** Linux auditd fields over audit records in the journal: `type` is the record type, the rest its `key=value` pairs. */
export function auditdField(name: string): Accessor {
  if (name === 'type')
    return (event) =>
      firstText(event.attributes['_AUDIT_TYPE_NAME']) ?? firstText(event.attributes['MESSAGE'])?.split(' ', 1)[0];
  return (event) => auditPairs(event)[name];
}

/** Security 4688 keeps Sysmon's process fields under other names; the alias reads them there. */
export const PROCESS_CREATION_FIELDS: Record<string, Accessor> = Object.fromEntries(
  Object.entries(SECURITY_4688_FIELDS).map(([sigma, security]) => [
    sigma,
    (event: NormalizedEvent) => (event.attributes['Channel'] === 'Security' ? event.attributes[security] : undefined),
  ]),
);
