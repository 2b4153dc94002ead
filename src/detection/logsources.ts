import type { NormalizedEvent } from '../events/normalized-event.js';
import { fail, ok, type Logsource, type Result } from './types.js';

/** Reads one field of an event; undefined when absent. */
export type Accessor = (event: NormalizedEvent) => unknown;

/** How a Sigma logsource maps onto Vigil events: index keys and per-logsource field aliases. */
export interface LogsourceMapping {
  readonly indexKeys: string[];
  /** Sigma field name -> where Vigil keeps it for this logsource (tried before `attributes`). */
  readonly aliases: Readonly<Record<string, Accessor>>;
}

function path(...keys: string[]): Accessor {
  return (event) => walk(event, keys);
}

function walk(root: unknown, keys: readonly string[]): unknown {
  let value = root;
  for (const key of keys) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

/**
 * A Zeek conn record is not a firewall verdict; a connection the monitor saw established was evidently
 * not blocked, anything else is unknown. Kernel firewall lines carry their own `blocked` attribute.
 */
const zeekBlocked: Accessor = (event) =>
  event.source.adapter === 'network-monitor' && event.outcome === 'success' ? 'false' : undefined;

/** Sigma's generic firewall taxonomy over Zeek conn and kernel netfilter events. */
const FIREWALL_FIELDS: Record<string, Accessor> = {
  src_ip: path('sourceEndpoint', 'ip'),
  dst_ip: path('destinationEndpoint', 'ip'),
  src_port: path('sourceEndpoint', 'port'),
  dst_port: path('destinationEndpoint', 'port'),
  username: path('actor', 'user'),
  blocked: zeekBlocked,
};

/** Sigma's generic dns taxonomy over Zeek dns.log (`query` is already Zeek's name). */
const DNS_FIELDS: Record<string, Accessor> = {
  answer: path('attributes', 'answers'),
  record_type: path('attributes', 'qtype_name'),
};

const AUTH = 'linux:auth';

/** `product: linux` services: the programs whose messages form that log (`auth` and `syslog` are special). */
const LINUX_SERVICE_PROGRAMS: Readonly<Record<string, readonly string[]>> = {
  sshd: ['sshd', 'sshd-session'],
  sudo: ['sudo'],
  su: ['su'],
  cron: ['cron', 'crond', 'crontab', 'anacron'],
  clamav: ['clamd', 'freshclam', 'clamav-milter', 'clamonacc'],
  vsftpd: ['vsftpd'],
};

/** Programs whose messages land in auth.log besides anything logged to the auth/authpriv facilities. */
const AUTH_PROGRAMS = new Set([
  'sshd', 'sshd-session', 'sudo', 'su', 'login', 'systemd-logind', 'useradd', 'userdel', 'usermod', 'groupadd',
  'groupdel', 'groupmod', 'passwd', 'chpasswd', 'chage', 'gpasswd', 'newgrp', 'chsh', 'chfn', 'pkexec', 'polkitd',
  'unix_chkpwd', 'sudoedit', 'doas',
]);

const LINUX_CATEGORIES = new Set(['process_creation', 'network_connection', 'file_event']);
const ZEEK_LOG = /^[a-z0-9_]{1,64}$/;

function mapping(indexKeys: string[], aliases: Record<string, Accessor> = {}): Result<LogsourceMapping> {
  return ok({ indexKeys, aliases });
}

function genericCategory(category: string, zeekOnly: boolean): Result<LogsourceMapping> | undefined {
  if (category === 'dns') return mapping(['zeek:dns'], DNS_FIELDS);
  if (category === 'firewall') return mapping(zeekOnly ? ['zeek:conn'] : ['zeek:conn', 'linux:class:firewall'], FIREWALL_FIELDS);
  return undefined;
}

function linuxLogsource(category: string | undefined, service: string | undefined): Result<LogsourceMapping> | undefined {
  if (category !== undefined && service !== undefined) return undefined;
  if (category === 'firewall') return mapping(['linux:class:firewall'], FIREWALL_FIELDS);
  if (category !== undefined) return LINUX_CATEGORIES.has(category) ? mapping([`linux:class:${category}`]) : undefined;
  if (service === undefined || service === 'syslog') return mapping(['linux']);
  if (service === 'auth') return mapping([AUTH]);
  const programs = Object.hasOwn(LINUX_SERVICE_PROGRAMS, service) ? LINUX_SERVICE_PROGRAMS[service] : undefined;
  return programs ? mapping(programs.map((p) => `linux:prog:${p}`)) : undefined;
}

function productLogsource(product: string, category: string | undefined, service: string | undefined): Result<LogsourceMapping> | undefined {
  switch (product) {
    case 'zeek':
      if (category !== undefined) return service === undefined ? genericCategory(category, true) : undefined;
      if (service === undefined) return mapping(['zeek']);
      return ZEEK_LOG.test(service) ? mapping([`zeek:${service}`]) : undefined;
    case 'linux':
      return linuxLogsource(category, service);
    case 'tailscale':
      if (category !== undefined) return undefined;
      if (service === undefined) return mapping(['tailscale']);
      if (service === 'network') return mapping(['tailscale:network']);
      return service === 'audit' || service === 'configuration' ? mapping(['tailscale:configuration']) : undefined;
    case 'vigil':
      return (service === 'api' || service === 'collector' || service === 'export') && category === undefined ? mapping([`vigil:${service}`]) : undefined;
    case 'opentelemetry':
      return service === undefined && category === undefined ? mapping(['otel']) : undefined;
    default:
      return undefined;
  }
}

function describe(ls: Logsource): string {
  const parts = (['product', 'category', 'service'] as const).filter((k) => ls[k] !== undefined).map((k) => `${k}: ${ls[k]}`);
  return `{${parts.join(', ')}}`;
}

/** Maps a Sigma logsource to the Vigil events it covers, or says that Vigil has no such events. */
export function mapLogsource(ls: Logsource): Result<LogsourceMapping> {
  const product = ls.product?.toLowerCase();
  const category = ls.category?.toLowerCase();
  const service = ls.service?.toLowerCase();
  const mapped = product === undefined
    ? (service === undefined && category !== undefined ? genericCategory(category, false) : undefined)
    : productLogsource(product, category, service);
  return mapped ?? fail(`unmapped logsource ${describe(ls)}: no Vigil events carry it (see docs/detections-engine.md for the mapped logsources)`);
}

function firstText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** The program of a Linux log line, canonical and lower-case: `sshd[42]` and `/usr/sbin/sshd` are `sshd`. */
export function eventProgram(event: NormalizedEvent): string | undefined {
  const a = event.attributes;
  const raw = event.source.adapter === 'syslog-rfc5424' ? firstText(a['APP-NAME']) : firstText(a['SYSLOG_IDENTIFIER']) ?? firstText(a['_COMM']);
  if (raw === undefined || raw === '' || raw.length > 256) return undefined;
  const base = raw.slice(raw.lastIndexOf('/') + 1).replace(/\[\d*\]:?$/, '');
  return base === '' ? undefined : base.toLowerCase();
}

function facilityOf(event: NormalizedEvent): number {
  const a = event.attributes;
  const raw = event.source.adapter === 'syslog-rfc5424' ? a['FACILITY'] : firstText(a['SYSLOG_FACILITY']);
  return typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,2}$/.test(raw) ? Number(raw) : -1;
}

function messageText(event: NormalizedEvent): string | undefined {
  return firstText(event.source.adapter === 'syslog-rfc5424' ? event.attributes['MSG'] : event.attributes['MESSAGE']);
}

/** auth.log holds the auth (4) and authpriv (10) facilities, the login programs, and PAM module lines. */
function isAuth(event: NormalizedEvent, program: string | undefined): boolean {
  const facility = facilityOf(event);
  if (facility === 4 || facility === 10) return true;
  if (program !== undefined && AUTH_PROGRAMS.has(program)) return true;
  return messageText(event)?.startsWith('pam_') ?? false;
}

function linuxKeys(event: NormalizedEvent): string[] {
  const keys = ['linux', `linux:class:${event.class}`];
  const program = eventProgram(event);
  if (program !== undefined) keys.push(`linux:prog:${program}`);
  if (isAuth(event, program)) keys.push(AUTH);
  return keys;
}

/** The index keys of an event: a rule is tried on an event only when they share a key. */
export function indexKeysForEvent(event: NormalizedEvent): string[] {
  const instance = event.source.instance;
  switch (event.source.adapter) {
    case 'network-monitor': return ['zeek', `zeek:${instance}`];
    case 'linux-journal':
    case 'syslog-rfc5424': return linuxKeys(event);
    case 'collector': return [`linux:class:${event.class}`];
    case 'mesh-vpn-logs': return ['tailscale', `tailscale:${instance}`];
    case 'vigil': return [`vigil:${instance}`];
    case 'opentelemetry-log': return ['otel'];
    default: return [];
  }
}

/**
 * The accessor for a Sigma field name: the logsource alias, then `attributes[name]` exactly (Zeek's
 * `id.orig_h` is one key), then a dotted path into the event (`actor.user`, `source.adapter`).
 */
export function fieldAccessor(name: string, aliases: Readonly<Record<string, Accessor>> = {}): Accessor {
  const alias = Object.hasOwn(aliases, name) ? aliases[name] : undefined;
  const keys = name.split('.');
  return (event) => {
    const aliased = alias?.(event);
    if (aliased !== undefined) return aliased;
    const attributes = event.attributes;
    if (Object.hasOwn(attributes, name)) return attributes[name];
    return keys.length > 1 ? walk(event, keys) : topLevel(event, name);
  };
}

/** NormalizedEvent fields a rule may name directly (`class: authentication`, `outcome: failure`). */
const EVENT_FIELDS = new Set(['id', 'category', 'class', 'activity', 'outcome', 'time', 'ingestedAt', 'severity']);

function topLevel(event: NormalizedEvent, name: string): unknown {
  return EVENT_FIELDS.has(name) ? (event as unknown as Record<string, unknown>)[name] : undefined;
}

/** A field of an event without any logsource alias: `attributes[name]`, then a dotted path into the event. */
export function eventFieldValue(event: NormalizedEvent, name: string): unknown {
  if (Object.hasOwn(event.attributes, name)) return event.attributes[name];
  return name.includes('.') ? walk(event, name.split('.')) : topLevel(event, name);
}

function someText(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item === 'string' && test(item)) return true;
  return false;
}

/**
 * Whether a keyword test holds on some searchable text of the event: the message and program of a
 * Linux line (a raw auth.log line shows both), an OTLP string body, otherwise every string attribute.
 */
export function someKeywordText(event: NormalizedEvent, test: (s: string) => boolean): boolean {
  const a = event.attributes;
  switch (event.source.adapter) {
    case 'linux-journal': return someText(a['MESSAGE'], test) || someText(a['SYSLOG_IDENTIFIER'], test);
    case 'syslog-rfc5424': return someText(a['MSG'], test) || someText(a['APP-NAME'], test);
    case 'opentelemetry-log': if (typeof a['body'] === 'string') return test(a['body']); break;
    default: break;
  }
  for (const key in a) if (someText(a[key], test)) return true;
  return false;
}
