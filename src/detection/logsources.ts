import type { LogsourceEvent, NormalizedEvent } from '../events/normalized-event.js';
import { fail, ok, type Logsource, type Result } from './types.js';
import {
  auditdField,
  valueAt,
  DNS_FIELDS,
  FIREWALL_FIELDS,
  PROCESS_CREATION_FIELDS,
  PROXY_FIELDS,
  WEBSERVER_FIELDS,
} from './logsource-fields.js';
import { WINDOWS_CATEGORIES, WINDOWS_SERVICE_CHANNELS, windowsCategories } from './windows-logsources.js';

/** Reads one field of an event; undefined when absent. */
export type Accessor = (event: NormalizedEvent) => unknown;

/** How a Sigma logsource maps onto Vigil events: index keys and per-logsource field aliases. */
export interface LogsourceMapping {
  readonly indexKeys: string[];
  /** Sigma field name -> where Vigil keeps it for this logsource (tried before `attributes`). */
  readonly aliases: Readonly<Record<string, Accessor>>;
  /** For logsources whose every field lives in one place (auditd `key=value` pairs): the accessor of a field. */
  readonly resolve?: (name: string) => Accessor | undefined;
}

function path(...keys: string[]): Accessor {
  return (event) => valueAt(event, keys);
}

const AUTH = 'linux:auth';
const AUDITD = 'linux:auditd';

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
  'sshd',
  'sshd-session',
  'sudo',
  'su',
  'login',
  'systemd-logind',
  'useradd',
  'userdel',
  'usermod',
  'groupadd',
  'groupdel',
  'groupmod',
  'passwd',
  'chpasswd',
  'chage',
  'gpasswd',
  'newgrp',
  'chsh',
  'chfn',
  'pkexec',
  'polkitd',
  'unix_chkpwd',
  'sudoedit',
  'doas',
]);

const LINUX_CATEGORIES = new Set(['process_creation', 'network_connection', 'file_event']);
const ZEEK_LOG = /^[a-z0-9_]{1,64}$/;

function mapping(
  indexKeys: string[],
  aliases: Record<string, Accessor> = {},
  resolve?: (name: string) => Accessor | undefined,
): Result<LogsourceMapping> {
  return ok({ indexKeys, aliases, ...(resolve ? { resolve } : {}) });
}

/**
 * Logsources without a product (Sigma's generic categories), over the events that carry them:
 * `dns` from Zeek dns, `firewall` from Zeek conn and kernel firewall lines, `proxy` and `webserver`
 * from Zeek http.
 */
function genericCategory(category: string, zeekOnly: boolean): Result<LogsourceMapping> | undefined {
  if (category === 'dns') return mapping(['zeek:dns'], DNS_FIELDS);
  if (category === 'firewall')
    return mapping(zeekOnly ? ['zeek:conn'] : ['zeek:conn', 'linux:class:firewall'], FIREWALL_FIELDS);
  if (category === 'proxy') return mapping(['zeek:http'], PROXY_FIELDS);
  if (category === 'webserver') return mapping(['zeek:http'], WEBSERVER_FIELDS);
  return undefined;
}

function linuxLogsource(
  category: string | undefined,
  service: string | undefined,
): Result<LogsourceMapping> | undefined {
  if (category !== undefined && service !== undefined) return undefined;
  if (category === 'firewall') return mapping(['linux:class:firewall'], FIREWALL_FIELDS);
  if (category !== undefined) return LINUX_CATEGORIES.has(category) ? mapping([`linux:class:${category}`]) : undefined;
  if (service === undefined || service === 'syslog') return mapping(['linux']);
  if (service === 'auth') return mapping([AUTH]);
  if (service === 'auditd') return mapping([AUDITD], {}, auditdField);
  const programs = Object.hasOwn(LINUX_SERVICE_PROGRAMS, service) ? LINUX_SERVICE_PROGRAMS[service] : undefined;
  return programs ? mapping(programs.map((p) => `linux:prog:${p}`)) : undefined;
}

/** `product: windows`: a service is its channels, a category its channel and event ids (windows-logsources.ts). */
function windowsLogsource(
  category: string | undefined,
  service: string | undefined,
): Result<LogsourceMapping> | undefined {
  if (category !== undefined && service !== undefined) return undefined;
  if (service !== undefined) {
    const channels = Object.hasOwn(WINDOWS_SERVICE_CHANNELS, service) ? WINDOWS_SERVICE_CHANNELS[service] : undefined;
    return channels ? mapping(channels.map((c) => `win:ch:${c.toLowerCase()}`)) : undefined;
  }
  if (category === undefined) return mapping(['win']);
  if (!Object.hasOwn(WINDOWS_CATEGORIES, category)) return undefined;
  return mapping([`win:cat:${category}`], category === 'process_creation' ? PROCESS_CREATION_FIELDS : {});
}

function productLogsource(
  product: string,
  category: string | undefined,
  service: string | undefined,
): Result<LogsourceMapping> | undefined {
  switch (product) {
    case 'zeek':
      if (category !== undefined) return service === undefined ? genericCategory(category, true) : undefined;
      if (service === undefined) return mapping(['zeek']);
      return ZEEK_LOG.test(service) ? mapping([`zeek:${service}`]) : undefined;
    case 'linux':
      return linuxLogsource(category, service);
    case 'windows':
      return windowsLogsource(category, service);
    case 'tailscale':
      if (category !== undefined) return undefined;
      if (service === undefined) return mapping(['tailscale']);
      if (service === 'network') return mapping(['tailscale:network']);
      return service === 'audit' || service === 'configuration' ? mapping(['tailscale:configuration']) : undefined;
    case 'vigil':
      return (service === 'api' || service === 'collector' || service === 'export' || service === 'syslog') &&
        category === undefined
        ? mapping([`vigil:${service}`])
        : undefined;
    case 'opentelemetry':
      return service === undefined && category === undefined ? mapping(['otel']) : undefined;
    default:
      return undefined;
  }
}

/** `{product: x, category: y}` as written in errors and the plan. */
export function describeLogsource(ls: Logsource): string {
  const parts = (['product', 'category', 'service'] as const)
    .filter((k) => ls[k] !== undefined)
    .map((k) => `${k}: ${ls[k]}`);
  return `{${parts.join(', ')}}`;
}

/**
 * Maps a Sigma logsource to the Vigil events it covers, or says that no Vigil normalizer produces
 * such events (the rule is still valid Sigma: it is stored and shown `blocked` in the plan).
 */
export function mapLogsource(ls: Logsource): Result<LogsourceMapping> {
  const product = ls.product?.toLowerCase();
  const category = ls.category?.toLowerCase();
  const service = ls.service?.toLowerCase();
  const mapped =
    product === undefined
      ? service === undefined && category !== undefined
        ? genericCategory(category, false)
        : undefined
      : productLogsource(product, category, service);
  return (
    mapped ??
    fail(
      `unmapped logsource ${describeLogsource(ls)}: no Vigil normalizer produces these events ` +
        `(docs/detections.md#logsource-mapping lists the mapped logsources)`,
    )
  );
}

function firstText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}

/** The program of a Linux log line, canonical and lower-case: `sshd[42]` and `/usr/sbin/sshd` are `sshd`. */
export function eventProgram(event: LogsourceEvent): string | undefined {
  const a = event.attributes;
  const raw =
    event.source.adapter === 'syslog-rfc5424'
      ? firstText(a['APP-NAME'])
      : (firstText(a['SYSLOG_IDENTIFIER']) ?? firstText(a['_COMM']));
  if (raw === undefined || raw === '' || raw.length > 256) return undefined;
  const base = raw.slice(raw.lastIndexOf('/') + 1).replace(/\[\d*\]:?$/, '');
  return base === '' ? undefined : base.toLowerCase();
}

function facilityOf(event: LogsourceEvent): number {
  const a = event.attributes;
  const raw = event.source.adapter === 'syslog-rfc5424' ? a['FACILITY'] : firstText(a['SYSLOG_FACILITY']);
  return typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d{1,2}$/.test(raw) ? Number(raw) : -1;
}

function messageText(event: LogsourceEvent): string | undefined {
  return firstText(event.source.adapter === 'syslog-rfc5424' ? event.attributes['MSG'] : event.attributes['MESSAGE']);
}

/** auth.log holds the auth (4) and authpriv (10) facilities, the login programs, and PAM module lines. */
function isAuth(event: LogsourceEvent, program: string | undefined): boolean {
  const facility = facilityOf(event);
  if (facility === 4 || facility === 10) return true;
  if (program !== undefined && AUTH_PROGRAMS.has(program)) return true;
  return messageText(event)?.startsWith('pam_') ?? false;
}

function linuxKeys(event: LogsourceEvent): string[] {
  const keys = ['linux', `linux:class:${event.class}`];
  const program = eventProgram(event);
  if (program !== undefined) keys.push(`linux:prog:${program}`);
  if (isAuth(event, program)) keys.push(AUTH);
  if (event.attributes['_TRANSPORT'] === 'audit') keys.push(AUDITD);
  return keys;
}

/**
 * Whether an event carries a Linux log line (journal fields: the collector's file and journal lines, normalized
 * events).
 */
function isLinuxLine(event: LogsourceEvent): boolean {
  return typeof event.attributes['MESSAGE'] === 'string' || typeof event.attributes['SYSLOG_IDENTIFIER'] === 'string';
}

/** A Windows Event Log record (opentelemetry-log, windowseventlog receiver): `win`, its channel and its categories. */
function windowsKeys(event: LogsourceEvent): string[] {
  const channel = event.attributes['Channel'];
  const id = event.attributes['EventID'];
  if (typeof channel !== 'string' || typeof id !== 'number') return [];
  return [
    'win',
    `win:ch:${channel.toLowerCase()}`,
    ...windowsCategories(channel, id, event.attributes['EventType']).map((c) => `win:cat:${c}`),
  ];
}

/** The index keys of an event: a rule is tried on an event only when they share a key. */
export function indexKeysForEvent(event: LogsourceEvent): string[] {
  const instance = event.source.instance;
  switch (event.source.adapter) {
    case 'network-monitor':
      return ['zeek', `zeek:${instance}`];
    case 'linux-journal':
    case 'syslog-rfc5424':
      return linuxKeys(event);
    // A line the collector tailed or read from the journal is the same evidence as through the
    // journal or syslog routes, so it gets the same keys (and so the same rules).
    case 'collector':
      return isLinuxLine(event) ? linuxKeys(event) : [`linux:class:${event.class}`];
    case 'mesh-vpn-logs':
      return ['tailscale', `tailscale:${instance}`];
    case 'vigil':
      return [`vigil:${instance}`];
    case 'opentelemetry-log':
      return ['otel', ...windowsKeys(event)];
    default:
      return isLinuxLine(event) ? linuxKeys(event) : [];
  }
}

/**
 * The accessor for a Sigma field name: the logsource alias, then `attributes[name]` exactly (Zeek's
 * `id.orig_h` is one key), then a dotted path into the event (`actor.user`, `source.adapter`).
 */
export function fieldAccessor(
  name: string,
  aliases: Readonly<Record<string, Accessor>> = {},
  resolve?: LogsourceMapping['resolve'],
): Accessor {
  const alias = Object.hasOwn(aliases, name) ? aliases[name] : resolve?.(name);
  const keys = name.split('.');
  return (event) => {
    const aliased = alias?.(event);
    if (aliased !== undefined) return aliased;
    const attributes = event.attributes;
    if (Object.hasOwn(attributes, name)) return attributes[name];
    return keys.length > 1 ? valueAt(event, keys) : topLevel(event, name);
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
  return name.includes('.') ? valueAt(event, name.split('.')) : topLevel(event, name);
}

function someText(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (!Array.isArray(value)) return false;
  for (const item of value) if (typeof item === 'string' && test(item)) return true;
  return false;
}

/**
 * The values a keyword search reads: the message and program of a Linux line (a raw auth.log line
 * shows both), an OTLP string body, otherwise every attribute (only strings and string lists count).
 */
export function keywordValues(event: NormalizedEvent): unknown[] {
  const a = event.attributes;
  switch (event.source.adapter) {
    case 'linux-journal':
      return [a['MESSAGE'], a['SYSLOG_IDENTIFIER']];
    case 'syslog-rfc5424':
      return [a['MSG'], a['APP-NAME']];
    case 'opentelemetry-log':
      if (typeof a['body'] === 'string') return [a['body']];
      break;
    default:
      break;
  }
  const out: unknown[] = [];
  for (const key in a) out.push(a[key]);
  return out;
}

/**
 * Whether a keyword test holds on some searchable text of the event (the values keywordValues
 * names, so the prefilter and the match read the same texts).
 */
export function someKeywordText(event: NormalizedEvent, test: (s: string) => boolean): boolean {
  for (const value of keywordValues(event)) if (someText(value, test)) return true;
  return false;
}
