import { isIP } from 'node:net';
import { EVENT_LIMITS } from '../../events/normalized-event.js';

/** An entity key candidate: undefined where the value was absent or unusable. */
export type MaybeKey = string | undefined;

/** `ip:<addr>` for a textual IP address (lower-cased so IPv6 spellings agree), else undefined. */
export function ipKey(value: string | undefined): MaybeKey {
  return value !== undefined && isIP(value) !== 0 ? `ip:${value.toLowerCase()}` : undefined;
}

/** A DNS name in the one form keys use: trimmed, lower-case, without the root's trailing dot. */
export function dnsName(value: string): string {
  return value.trim().toLowerCase().replace(/\.+$/, '');
}

/** `domain:<fqdn>` for a DNS name (an IP literal gives `ip:` instead), else undefined. */
export function domainKey(value: string | undefined): MaybeKey {
  if (value === undefined) return undefined;
  const name = dnsName(value);
  if (name === '') return undefined;
  return isIP(name) !== 0 ? ipKey(name) : `domain:${name}`;
}

/** `host:<name>` for a host name, lower-cased like DNS names, else undefined. */
export function hostKey(value: string | undefined): MaybeKey {
  if (value === undefined) return undefined;
  const name = dnsName(value);
  return name === '' ? undefined : `host:${name}`;
}

/** `user:<name>` with the name as the source spells it, else undefined. */
export function userKey(value: string | undefined): MaybeKey {
  return value !== undefined && value.trim() !== '' ? `user:${value}` : undefined;
}

/** `cert:<fingerprint, file id or serial>` as sent, else undefined. */
export function certKey(value: string | undefined): MaybeKey {
  return value !== undefined && value.trim() !== '' ? `cert:${value}` : undefined;
}

/** `file:<fuid>` for a Zeek file id, else undefined. */
export function fileKey(value: string | undefined): MaybeKey {
  return value !== undefined && value.trim() !== '' ? `file:${value}` : undefined;
}

/** `service:<name>` lower-cased, else undefined. */
export function serviceKey(value: string | undefined): MaybeKey {
  const name = value?.trim().toLowerCase();
  return name ? `service:${name}` : undefined;
}

/** Transports whose "port" is a port; for ICMP Zeek puts the message type and code there. */
const PORTED = new Set(['tcp', 'udp', 'sctp']);

/** `port:<proto>/<n>` for a TCP, UDP or SCTP port, else undefined. */
export function portKey(proto: string | undefined, port: number | undefined): MaybeKey {
  const transport = proto?.toLowerCase();
  return transport !== undefined && PORTED.has(transport) && port !== undefined
    ? `port:${transport}/${port}`
    : undefined;
}

/** The entity keys of one event: candidates deduplicated in order, bounded in count and length. */
export function finalKeys(candidates: Iterable<MaybeKey>): string[] {
  const out = new Set<string>();
  for (const key of candidates) {
    if (key === undefined || key.length > EVENT_LIMITS.entityKeyLength) continue;
    out.add(key);
    if (out.size >= EVENT_LIMITS.entityKeys) break;
  }
  return [...out];
}
