import { isIP } from 'node:net';
import { domainToASCII } from 'node:url';
import type { IndicatorType } from './types.js';

/**
 * An event's values in the form indicators are kept in (types.ts, IndicatorTerm), so that matching is a lookup
 * of equal strings: canonical IPv4/IPv6 text, lower-case domains, normalized URLs, lower-case hashes and e-mail
 * addresses. These read what an event holds (a Zeek `host`, an OTel `server.address`, a Sysmon `Hashes` list);
 * the readers' normalize.ts does the same for a feed's values, and the two must agree (docs/intel.md, "Matching").
 */

/** One value of an event, typed and normalized. */
export interface EventValue {
  readonly type: IndicatorType;
  readonly value: string;
}

/** The longest value read: a URL past it is skipped (an attacker's 1 MB URL costs nothing to ignore). */
export const MAX_VALUE_LENGTH = 2048;
/** The longest DNS name (RFC 1035, without the root's dot). */
const MAX_DOMAIN_LENGTH = 253;

/** An IPv6 address's eight 16-bit groups, from text `isIP` accepted as version 6 (no zone). */
export function ipv6Groups(text: string): number[] | undefined {
  let head = text;
  const tail: number[] = [];
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    tail.push((a << 8) | b, (c << 8) | d);
    // What precedes the IPv4 tail ends in `:`; drop it unless it is the `::` of elided groups.
    head = text.slice(0, dotted.index);
    if (!head.endsWith('::')) head = head.slice(0, -1);
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const part = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const left = part(halves[0]!);
  const right = halves.length === 2 ? part(halves[1]!) : [];
  const missing = 8 - tail.length - left.length - right.length;
  if (missing < 0 || (halves.length === 1 && missing !== 0)) return undefined;
  const groups = [...left, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...right, ...tail];
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** RFC 5952 text of eight groups: lower-case, no leading zeros, the longest run of two or more zero groups as `::`. */
function ipv6Text(groups: readonly number[]): string {
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

/**
 * An address as indicators hold it: IPv4 dotted decimal, IPv6 in RFC 5952 text; an IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`) is its IPv4 address, so IPv4 indicators and ranges match it. Brackets and an IPv6 zone
 * (`fe80::1%eth0`, an interface, not part of the address) are dropped. Undefined when not an address.
 */
export function eventIp(raw: string): EventValue | undefined {
  let text = raw.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const version = isIP(text);
  if (version === 4) return { type: 'ipv4', value: text };
  if (version !== 6) return undefined;
  const groups = ipv6Groups(text);
  if (groups === undefined) return undefined;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi, lo] = [groups[6]!, groups[7]!];
    return { type: 'ipv4', value: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}` };
  }
  return { type: 'ipv6', value: ipv6Text(groups) };
}

const DOMAIN = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

/**
 * A DNS name as indicators hold it: trimmed, lower-case, without the root's trailing dot, an internationalized
 * name in its ASCII (punycode) form; an IP literal is an address instead. Undefined when it is not a DNS name.
 */
export function eventDomain(raw: string): EventValue | undefined {
  if (raw.length > MAX_DOMAIN_LENGTH + 2) return undefined;
  const name = raw.trim().toLowerCase().replace(/\.+$/, '');
  if (name === '') return undefined;
  const ip = eventIp(name);
  if (ip) return ip;
  // eslint-disable-next-line no-control-regex
  const ascii = /^[\x00-\x7f]*$/.test(name) ? name : domainToASCII(name);
  return DOMAIN.test(ascii) ? { type: 'domain', value: ascii } : undefined;
}

/** A host an event names (an OTel `server.address`, an endpoint's `host`): an address or a DNS name. */
export function eventHost(raw: string): EventValue | undefined {
  return eventIp(raw) ?? eventDomain(raw);
}

/** Schemes whose URLs are matched; anything else (`data:`, `javascript:`, `mailto:`) is not a URL indicator's. */
const URL_SCHEMES = new Set(['http:', 'https:', 'ftp:', 'ws:', 'wss:']);

/**
 * A URL as indicators hold it: the WHATWG serialization (scheme and host lower-case, default port dropped, path
 * kept with its dot segments resolved and its unsafe characters percent-encoded, query kept) without its fragment,
 * which never leaves the client. Undefined for other schemes, unparsable text, or past MAX_VALUE_LENGTH.
 */
export function eventUrl(raw: string): { url: EventValue; host: EventValue | undefined } | undefined {
  if (raw.length > MAX_VALUE_LENGTH) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw.trim());
  } catch {
    return undefined;
  }
  if (!URL_SCHEMES.has(parsed.protocol) || parsed.hostname === '') return undefined;
  parsed.hash = '';
  const value = parsed.href;
  if (value.length > MAX_VALUE_LENGTH) return undefined;
  return { url: { type: 'url', value }, host: eventHost(parsed.hostname) };
}

/**
 * The URL of a Zeek http.log request: `http://` + `host` + `uri` (the log sees plain HTTP only); a proxy's
 * absolute `uri` is the URL itself. Undefined without a host or a uri.
 */
export function zeekHttpUrl(host: unknown, uri: unknown): ReturnType<typeof eventUrl> {
  if (typeof uri !== 'string' || uri === '') return undefined;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(uri)) return eventUrl(uri);
  if (typeof host !== 'string' || host === '') return undefined;
  return eventUrl(`http://${host}${uri.startsWith('/') ? '' : '/'}${uri}`);
}

const HASH_TYPES: Readonly<Record<number, IndicatorType>> = { 32: 'md5', 40: 'sha1', 64: 'sha256' };

/** A file hash by its length (32, 40 or 64 hex digits), lower-case; undefined for anything else. */
export function eventHash(raw: string): EventValue | undefined {
  const text = raw.trim();
  const type = HASH_TYPES[text.length];
  return type !== undefined && /^[0-9a-f]+$/i.test(text) ? { type, value: text.toLowerCase() } : undefined;
}

/** A hash of a declared kind: undefined when the value is not one (a Zeek `md5` field holding garbage). */
export function eventHashOf(type: 'md5' | 'sha1' | 'sha256', raw: string): EventValue | undefined {
  const hash = eventHash(raw);
  return hash?.type === type ? hash : undefined;
}

/**
 * Sysmon's `Hashes` field (`SHA1=...,MD5=...,SHA256=...,IMPHASH=...`): the MD5, SHA1 and SHA256 among them
 * (IMPHASH is an MD5-sized hash of the import table, not of the file, and is left out).
 */
export function sysmonHashes(raw: string): EventValue[] {
  const out: EventValue[] = [];
  for (const part of raw.slice(0, 1024).split(',')) {
    const [name = '', value = ''] = part.split('=');
    const kind = name.trim().toLowerCase();
    if (kind === 'md5' || kind === 'sha1' || kind === 'sha256') {
      const hash = eventHashOf(kind, value);
      if (hash) out.push(hash);
    }
  }
  return out;
}

const EMAIL = /^[^\s@<>"(),;:]{1,64}@[^\s@<>"(),;:]{1,253}$/;

/**
 * An e-mail address as indicators hold it, lower-case, from a bare address or a header's `"Name" <a@b>`;
 * the domain part is checked as a DNS name. Undefined when there is none.
 */
export function eventEmail(raw: string): EventValue | undefined {
  if (raw.length > 512) return undefined;
  const angle = /<([^<>]*)>\s*$/.exec(raw);
  const address = (angle ? angle[1]! : raw).trim().toLowerCase();
  if (!EMAIL.test(address)) return undefined;
  const at = address.lastIndexOf('@');
  const domain = eventDomain(address.slice(at + 1));
  return domain?.type === 'domain' ? { type: 'email', value: `${address.slice(0, at)}@${domain.value}` } : undefined;
}
