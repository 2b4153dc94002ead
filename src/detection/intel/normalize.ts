import { domainToASCII } from 'node:url';
import type { IndicatorType } from './types.js';

/**
 * Indicator values normalized one way, whichever feed or event field they come from (issue 60), so that matching is
 * an exact comparison: each function returns the normalized text, or undefined when the input is malformed. None
 * throws, whatever it is given. The same functions normalize the event side (the matcher's fields).
 */

/** The longest value any normalizer looks at; longer input is refused rather than scanned. */
export const MAX_VALUE_LENGTH = 8192;

const HASH_LENGTHS = { md5: 32, sha1: 40, sha256: 64 } as const;

/** Parses dotted-quad IPv4 into a 32-bit number; refuses leading zeros (`010.0.0.1` reads as octal in some tools). */
function ipv4Number(s: string): number | undefined {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i <= s.length; i++) {
    const c = i < s.length ? s.charCodeAt(i) : 46;
    if (c >= 48 && c <= 57) {
      if (digits > 0 && octet === 0) return undefined;
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return undefined;
    } else if (c === 46) {
      if (digits === 0) return undefined;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      if (i < s.length && ++dots > 3) return undefined;
    } else return undefined;
  }
  return dots === 3 ? value : undefined;
}

function ipv4Text(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** Parses one group list (`a:b:c`, possibly ending in dotted IPv4) into 16-bit groups. */
function ipv6Groups(part: string, allowV4Tail: boolean): number[] | undefined {
  if (part === '') return [];
  const pieces = part.split(':');
  const out: number[] = [];
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i]!;
    if (allowV4Tail && i === pieces.length - 1 && p.includes('.')) {
      const v4 = ipv4Number(p);
      if (v4 === undefined) return undefined;
      out.push(v4 >>> 16, v4 & 0xffff);
    } else {
      if (p.length < 1 || p.length > 4 || !/^[0-9a-fA-F]+$/.test(p)) return undefined;
      out.push(parseInt(p, 16));
    }
  }
  return out;
}

/** Parses IPv6 text (with `::` and an IPv4 tail; no zone index) into 8 groups. */
function ipv6Parse(s: string): number[] | undefined {
  if (s.length < 2 || s.length > 45) return undefined;
  const gap = s.indexOf('::');
  if (gap === -1) {
    const groups = ipv6Groups(s, true);
    return groups?.length === 8 ? groups : undefined;
  }
  if (s.indexOf('::', gap + 1) !== -1) return undefined;
  const head = ipv6Groups(s.slice(0, gap), false);
  const tail = ipv6Groups(s.slice(gap + 2), true);
  if (!head || !tail || head.length + tail.length > 7) return undefined;
  return [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** RFC 5952 text: lower-case, no leading zeros, the longest run of two or more zero groups (the first) as `::`. */
function ipv6Text(g: readonly number[]): string {
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (g[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [bestStart, bestLen] = [i, j - i];
    i = j;
  }
  const hex = (from: number, to: number) =>
    g
      .slice(from, to)
      .map((x) => x.toString(16))
      .join(':');
  if (bestStart === -1) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLen, 8)}`;
}

/** True for `::ffff:a.b.c.d`, an IPv4 address carried in IPv6. */
function isV4Mapped(g: readonly number[]): boolean {
  return g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 && g[4] === 0 && g[5] === 0xffff;
}

/**
 * An IP address's canonical text and family: dotted quad without leading zeros, or RFC 5952 IPv6. An IPv4-mapped
 * IPv6 address (`::ffff:192.0.2.1`) is the IPv4 address it carries, so that an event seen through a dual-stack socket
 * matches an IPv4 indicator. Brackets and zone indexes (`fe80::1%eth0`) are refused.
 */
export function normalizeIp(raw: string): { type: 'ipv4' | 'ipv6'; value: string } | undefined {
  if (typeof raw !== 'string' || raw.length > 64) return undefined;
  const s = raw.trim();
  if (!s.includes(':')) {
    const n = ipv4Number(s);
    return n === undefined ? undefined : { type: 'ipv4', value: ipv4Text(n) };
  }
  const g = ipv6Parse(s);
  if (!g) return undefined;
  if (isV4Mapped(g)) return { type: 'ipv4', value: ipv4Text(((g[6]! << 16) | g[7]!) >>> 0) };
  return { type: 'ipv6', value: ipv6Text(g) };
}

/**
 * A CIDR range's canonical text, host bits cleared (`10.1.2.3/16` is `10.1.0.0/16`, `2001:DB8::1/32` is
 * `2001:db8::/32`). A single address written as `/32` or `/128` stays a CIDR term (the matcher's range structure
 * holds it); a bare address without `/` is not a CIDR (use normalizeIp).
 */
export function normalizeCidr(raw: string): string | undefined {
  if (typeof raw !== 'string' || raw.length > 64) return undefined;
  const s = raw.trim();
  const slash = s.indexOf('/');
  if (slash === -1) return undefined;
  const lenText = s.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(lenText)) return undefined;
  const len = Number(lenText);
  const addr = s.slice(0, slash);
  if (!addr.includes(':')) {
    const n = ipv4Number(addr);
    if (n === undefined || len > 32) return undefined;
    const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
    return `${ipv4Text((n & mask) >>> 0)}/${len}`;
  }
  const g = ipv6Parse(addr);
  if (!g || len > 128) return undefined;
  const cleared = g.map((group, i) => {
    const keep = Math.max(0, Math.min(16, len - i * 16));
    return keep === 0 ? 0 : group & ((0xffff << (16 - keep)) & 0xffff);
  });
  return `${ipv6Text(cleared)}/${len}`;
}

/**
 * A domain name: trimmed, lower-case, internationalized names in their ASCII (punycode) form, one trailing dot
 * dropped. Refused: fewer than two labels (a bare `com` would match every subdomain under the matcher's rule), a
 * label empty or over 63 characters, a name over 253, characters other than letters, digits, `-` and `_`, a label
 * starting or ending with `-`, and an all-numeric last label (that is an address, not a name).
 */
export function normalizeDomain(raw: string): string | undefined {
  if (typeof raw !== 'string' || raw.length > 1024) return undefined;
  let s = raw.trim().toLowerCase();
  if (s.endsWith('.')) s = s.slice(0, -1);
  if (!/^[a-z0-9._-]*$/.test(s)) {
    s = domainToASCII(s);
    if (s === '') return undefined;
  }
  if (s.length === 0 || s.length > 253) return undefined;
  const labels = s.split('.');
  if (labels.length < 2) return undefined;
  for (const label of labels) {
    if (label.length === 0 || label.length > 63) return undefined;
    if (label.charCodeAt(0) === 45 || label.charCodeAt(label.length - 1) === 45) return undefined;
    for (let i = 0; i < label.length; i++) {
      const c = label.charCodeAt(i);
      const ok = (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 45 || c === 95;
      if (!ok) return undefined;
    }
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return undefined;
  return s;
}

/**
 * A URL as the WHATWG URL parser serializes it: scheme and host lower-case (IDN hosts in punycode, IP hosts
 * canonical), the scheme's default port dropped, an empty path as `/`, dot segments resolved, path and query kept
 * (their case too), the fragment dropped (a client never sends it, so no event holds it). Only http, https and ftp;
 * a value without `scheme://` is read as `http://` (MISP `url` attributes are often written so).
 */
export function normalizeUrl(raw: string): string | undefined {
  if (typeof raw !== 'string' || raw.length > MAX_VALUE_LENGTH) return undefined;
  const s = raw.trim();
  if (s === '' || /[\s\u0000-\u001f]/.test(s)) return undefined;
  const withScheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(s) ? s : `http://${s}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:' && url.protocol !== 'ftp:') return undefined;
  if (url.hostname === '') return undefined;
  if (url.hostname.endsWith('.')) url.hostname = url.hostname.slice(0, -1);
  url.hash = '';
  return url.href;
}

/** A hash as lower-case hex of its algorithm's length (32, 40 or 64 digits). */
export function normalizeHash(type: 'md5' | 'sha1' | 'sha256', raw: string): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const s = raw.trim().toLowerCase();
  if (s.length !== HASH_LENGTHS[type]) return undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return undefined;
  }
  return s;
}

/**
 * An e-mail address, lower-case (the local part too: mail systems treat it case-insensitively in practice):
 * exactly one `@`, a local part of 1 to 64 printable characters without spaces, `<`, `>` or `"`, and a domain as
 * normalizeDomain takes it. Display names (`Name <a@b>`) are refused.
 */
export function normalizeEmail(raw: string): string | undefined {
  if (typeof raw !== 'string' || raw.length > 320) return undefined;
  const s = raw.trim();
  const at = s.indexOf('@');
  if (at < 1 || at !== s.lastIndexOf('@') || at > 64) return undefined;
  const local = s.slice(0, at).toLowerCase();
  if (!/^[!#-'*+\-.-9=?^-~]+$/.test(local) || local.startsWith('.') || local.endsWith('.')) return undefined;
  const domain = normalizeDomain(s.slice(at + 1));
  return domain === undefined ? undefined : `${local}@${domain}`;
}

/** The normalized value of `raw` as an indicator of `type`, or undefined when it is not one. */
export function normalizeTerm(type: IndicatorType, raw: string): string | undefined {
  if (typeof raw !== 'string' || raw.length > MAX_VALUE_LENGTH) return undefined;
  switch (type) {
    case 'ipv4':
    case 'ipv6': {
      const ip = normalizeIp(raw);
      return ip?.type === type ? ip.value : undefined;
    }
    case 'cidr':
      return normalizeCidr(raw);
    case 'domain':
      return normalizeDomain(raw);
    case 'url':
      return normalizeUrl(raw);
    case 'md5':
    case 'sha1':
    case 'sha256':
      return normalizeHash(type, raw);
    case 'email':
      return normalizeEmail(raw);
    default: {
      const never: never = type;
      return never;
    }
  }
}

/** What every reader throws for a document that is not of its format (not a bundle, not a MISP event, too large). */
export class IntelFormatError extends Error {
  override readonly name = 'IntelFormatError';
}

/** Text cut to `max` characters, for what an unsupported indicator shows as written. */
export function cut(text: string, max = 512): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
