import { BlockList, isIP } from 'node:net';

/** Parses `a.b.c.d/n`, `v6::/n` or a bare address (a /32 or /128); undefined when invalid. */
export function parseCidr(text: string): { address: string; prefix: number; family: 'ipv4' | 'ipv6' } | undefined {
  const [address = '', prefixText, extra] = text.split('/');
  if (extra !== undefined) return undefined;
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix >= 0 && prefix <= max)) return undefined;
  return { address, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** Strips the IPv4-mapped IPv6 form (`::ffff:127.0.0.1`) so v4 ranges match it. */
export function normalizeAddress(address: string): string {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return m ? m[1]! : address;
}

/** A set of CIDR ranges with a membership test. */
export interface CidrSet {
  has(address: string): boolean;
}

/** Builds a CidrSet; throws on an invalid range (config validation catches these first). */
export function cidrSet(ranges: readonly string[]): CidrSet {
  const list = new BlockList();
  for (const r of ranges) {
    const c = parseCidr(r);
    if (!c) throw new Error(`invalid CIDR range: ${r}`);
    list.addSubnet(c.address, c.prefix, c.family);
  }
  return {
    has(address) {
      // An IPv6 zone (`fe80::1%eth0`) names an interface, not part of the address.
      const zone = address.indexOf('%');
      const a = normalizeAddress(zone >= 0 ? address.slice(0, zone) : address);
      const v = isIP(a);
      return v !== 0 && list.check(a, v === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/** Whether an address is loopback (127.0.0.0/8, ::1, or their mapped forms). */
export const isLoopback = (address: string): boolean => LOOPBACK.has(address);
const LOOPBACK = cidrSet(['127.0.0.0/8', '::1/128']);
