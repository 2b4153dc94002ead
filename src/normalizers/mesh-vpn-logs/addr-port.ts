import { isIP } from 'node:net';

/** An IP address and port as Tailscale's netip.AddrPort writes it. */
export interface AddrPort {
  readonly ip: string;
  readonly port: number;
}

/** The magic address Tailscale uses for DERP relays in physical traffic; the port is the DERP region id. */
export const DERP_MAGIC_IP = '127.3.3.40';

const BRACKETED = /^\[([^\]]+)\]:(\d{1,5})$/;
const PLAIN = /^([^:[\]]+):(\d{1,5})$/;

/** Parses `ip:port` (IPv4) or `[ipv6]:port`; undefined when the text is neither. */
export function parseAddrPort(text: string): AddrPort | undefined {
  const bracketed = BRACKETED.exec(text);
  const m = bracketed ?? PLAIN.exec(text);
  if (!m) return undefined;
  const ip = m[1]!;
  const port = Number(m[2]);
  if (port > 65535 || isIP(ip) !== (bracketed ? 6 : 4)) return undefined;
  return { ip, port };
}
