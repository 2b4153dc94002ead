import type { Category, Outcome } from '../../events/normalized-event.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

/** The classification half of a recognition: what happened and how bad it is. */
export interface Verdict {
  readonly category: Category;
  readonly class: string;
  readonly activity: string;
  readonly outcome: Outcome;
  readonly severity: number;
}

/** Extra parties a matcher knows about beyond what its fields imply. */
export interface Parties {
  /**
   * The user who acted, when it is not `fields.user`; null when the text does not say (`fields.user` is the object).
   */
  readonly actorUser?: string | null;
  /** Other users involved (a sudo or su target, a session's owner), keyed as `user:` entities. */
  readonly otherUsers?: readonly (string | undefined)[];
  readonly service?: Record<string, unknown>;
}

/** Longest field value kept: long enough for a sudo COMMAND, short enough to bound copies. */
const MAX_FIELD = 1024;
/** Longest value used inside an entity key or endpoint (the schema caps keys at 512). */
const MAX_NAME = 256;

const IPV4 = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9A-Fa-f:.]{2,45}(?:%[\w.-]{1,32})?$/;

/** Whether a token is an IPv4 or IPv6 address literal (sshd prints a host name instead when UseDNS is on). */
export function isIpAddress(text: string): boolean {
  if (IPV4.test(text)) return true;
  return text.includes(':') && IPV6.test(text);
}

/** A TCP/UDP port as a number, or undefined when the text is not one. */
export function portNumber(text: string | undefined): number | undefined {
  if (text === undefined || !/^\d{1,5}$/.test(text)) return undefined;
  const n = Number(text);
  return n <= 65535 ? n : undefined;
}

/** Puts an address into `src_ip` when it is an IP literal and into `src_host` otherwise. */
export function addressFields(
  address: string | undefined,
  port: string | undefined,
): Record<string, string | undefined> {
  if (address === undefined || address === '') return {};
  return isIpAddress(address) ? { src_ip: address, src_port: port } : { src_host: address, src_port: port };
}

function usable(value: string | undefined, max: number): value is string {
  return value !== undefined && value !== '' && value.length <= max;
}

function cleanFields(fields: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, value] of Object.entries(fields)) {
    if (value !== undefined && value !== '') out[k] = value.length > MAX_FIELD ? value.slice(0, MAX_FIELD) : value;
  }
  return out;
}

function endpoint(
  ip: string | undefined,
  host: string | undefined,
  port: string | undefined,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if (usable(ip, MAX_NAME)) out['ip'] = ip;
  else if (usable(host, MAX_NAME)) out['host'] = host;
  else return undefined;
  const p = portNumber(port);
  if (p !== undefined) out['port'] = p;
  return out;
}

function actorOf(user: string | undefined, host: string | undefined): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if (usable(user, MAX_NAME)) out['user'] = user;
  if (usable(host, MAX_NAME)) out['host'] = host;
  return Object.keys(out).length > 0 ? out : undefined;
}

function keysOf(
  f: Record<string, string>,
  input: LinuxMessageInput,
  users: (string | undefined)[],
  service?: Record<string, unknown>,
): string[] {
  const keys: string[] = [];
  const add = (prefix: string, value: string | undefined): void => {
    if (usable(value, MAX_NAME)) keys.push(`${prefix}:${value}`);
  };
  for (const u of users) add('user', u);
  add('host', input.host);
  add('ip', f['src_ip']);
  add('ip', f['dst_ip']);
  add('host', f['src_host']);
  const serviceName = service?.['name'];
  if (typeof serviceName === 'string') add('service', serviceName);
  const pid = f['pid'] ?? input.pid;
  if (usable(input.host, MAX_NAME) && pid !== undefined && /^\d{1,10}$/.test(pid))
    add('process', `${input.host}/${pid}`);
  add('process', f['process']);
  return [...new Set(keys)];
}

/** Assembles a RecognizedMessage: actor, endpoints and entity keys follow from the fields and the input. */
export function recognized(
  input: LinuxMessageInput,
  verdict: Verdict,
  rawFields: Record<string, string | undefined>,
  parties: Parties = {},
): RecognizedMessage {
  const fields = cleanFields(rawFields);
  const actorUser = parties.actorUser === null ? undefined : (parties.actorUser ?? fields['user']);
  const users = [actorUser, fields['user'], ...(parties.otherUsers ?? [])];
  const actor = actorOf(actorUser, input.host);
  const src = endpoint(fields['src_ip'], fields['src_host'], fields['src_port']);
  const dst = endpoint(fields['dst_ip'], undefined, fields['dst_port']);
  return {
    ...verdict,
    ...(actor ? { actor } : {}),
    ...(src ? { sourceEndpoint: src } : {}),
    ...(dst ? { destinationEndpoint: dst } : {}),
    ...(parties.service ? { service: parties.service } : {}),
    entityKeys: keysOf(fields, input, users, parties.service),
    fields,
  };
}

/** Splits `text` at the last occurrence of `sep`; the last one is what the daemon appended, not user input. */
export function splitLast(text: string, sep: string): readonly [string, string] | undefined {
  const i = text.lastIndexOf(sep);
  return i < 0 ? undefined : [text.slice(0, i), text.slice(i + sep.length)];
}

/**
 * Parses space-separated `key=value` tokens (pam's `logname= uid=0 ... rhost=x  user=y`); the first of each key wins.
 */
export function spaceKeyValues(text: string): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const token of text.split(' ', 256)) {
    const eq = token.indexOf('=');
    if (eq <= 0 || out.size >= 64) continue;
    const key = token.slice(0, eq);
    if (!out.has(key)) out.set(key, token.slice(eq + 1));
  }
  return out;
}
