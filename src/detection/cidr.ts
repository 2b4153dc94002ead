/**
 * CIDR matching for the `cidr` modifier. Addresses are 16 bytes; IPv4 is held as IPv4-mapped IPv6
 * (`::ffff:a.b.c.d`) so one comparison serves both families and a mapped address in a log still
 * matches an IPv4 network.
 */

/** A parsed network: the masked address bytes and the prefix length over 128 bits. */
export interface Network {
  readonly bytes: readonly number[];
  readonly prefix: number;
}

const V4_PART = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

function parseV4(text: string): number[] | undefined {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => V4_PART.test(p))) return undefined;
  return parts.map(Number);
}

function mapped(v4: number[]): number[] {
  return [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4];
}

function parseGroups(text: string): number[] | undefined {
  if (text === '') return [];
  const groups = text.split(':');
  const out: number[] = [];
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    out.push(parseInt(g, 16));
  }
  return out;
}

function parseV6(input: string): number[] | undefined {
  let text = input;
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // An embedded IPv4 tail (`::ffff:10.0.0.1`) is rewritten as its two hex groups.
    const v4 = parseV4(text.slice(lastColon + 1));
    if (!v4) return undefined;
    const hex = (hi: number, lo: number): string => ((hi << 8) | lo).toString(16);
    text = `${text.slice(0, lastColon + 1)}${hex(v4[0]!, v4[1]!)}:${hex(v4[2]!, v4[3]!)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = parseGroups(halves[0]!);
  const rest = halves.length === 2 ? parseGroups(halves[1]!) : [];
  if (!head || !rest) return undefined;
  const known = head.length + rest.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined;
  const groups = [...head, ...new Array<number>(8 - known).fill(0), ...rest];
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** Parses an IPv4 or IPv6 address (an IPv6 zone such as `%eth0` is ignored) into 16 bytes. */
export function parseAddress(text: string): number[] | undefined {
  if (text.length > 64) return undefined;
  if (text.includes(':')) {
    const zone = text.indexOf('%');
    return parseV6(zone >= 0 ? text.slice(0, zone) : text);
  }
  const v4 = parseV4(text);
  return v4 ? mapped(v4) : undefined;
}

/** Parses `address/prefix` (or a bare address, a single host) into a network, or explains why not. */
export function parseNetwork(text: string): Network | string {
  const slash = text.indexOf('/');
  const addressText = slash >= 0 ? text.slice(0, slash) : text;
  const bytes = parseAddress(addressText);
  if (!bytes) return `'${text}' is not an IPv4 or IPv6 network`;
  const isV4 = !addressText.includes(':');
  const max = isV4 ? 32 : 128;
  const prefixText = slash >= 0 ? text.slice(slash + 1) : String(max);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) return `'${text}' has an invalid prefix length`;
  const prefix = Number(prefixText) + (isV4 ? 96 : 0);
  return { bytes: maskBytes(bytes, prefix), prefix };
}

function maskBytes(bytes: number[], prefix: number): number[] {
  return bytes.map((b, i) => {
    const bits = Math.max(0, Math.min(8, prefix - i * 8));
    return b & ((0xff << (8 - bits)) & 0xff);
  });
}

/** Whether an address (16 bytes) lies inside a network. */
export function inNetwork(address: readonly number[], network: Network): boolean {
  for (let i = 0; i < 16; i++) {
    const bits = Math.max(0, Math.min(8, network.prefix - i * 8));
    if (bits === 0) return true;
    const mask = (0xff << (8 - bits)) & 0xff;
    if ((address[i]! & mask) !== network.bytes[i]) return false;
  }
  return true;
}
