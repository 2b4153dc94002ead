import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { fixturePath } from './paths.js';

/** The whois answers of the samples, byte for byte. */
export const WHOIS_USER_NODE = readFileSync(fixturePath('tailscale-whois', 'whois-response-user-node-constructed.json'), 'utf8');
export const WHOIS_TAGGED_NODE = readFileSync(fixturePath('tailscale-whois', 'whois-response-tagged-node-constructed.json'), 'utf8');
/** What the samples identify. */
export const ALICE_USER_ID = '6542213798012345';
export const ALICE_NODE_ID = 'nDbSrv01CNTRL';
export const TAGGED_NODE_ID = 'nQ7rS8tU9CNTRL';
export const TAGGED_DEVICES_USER_ID = '6542213798099999';

/** How the stand-in behaves: as the daemon, answering after `slowMs`, or with a body that is not JSON. */
export type StandInMode = 'normal' | 'slow' | 'garbage';

/** A LocalAPI stand-in on a Unix socket: answers whois for the IPs of `peers` as tailscaled does. */
export interface LocalApiStandIn {
  readonly socketPath: string;
  /** Every `addr` asked, in order. */
  readonly asked: string[];
  mode: StandInMode;
  slowMs: number;
  /** Whois bodies by peer IP (the port is ignored, as with a kernel-mode daemon). */
  readonly peers: Map<string, string>;
  /** Stops listening and removes the socket: the daemon is down. */
  close(): Promise<void>;
}

/** The IP of an `addr` parameter as `netip.ParseAddrPort` reads it (`1.2.3.4:5`, `[v6]:5`), or undefined. */
function ipOf(addr: string): string | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d+\.\d+\.\d+\.\d+)):(\d{1,5})$/.exec(addr);
  return m ? (m[1] ?? m[2]) : undefined;
}

/**
 * Starts the stand-in in `dir`. Like tailscaled it refuses a Host other than
 * `local-tailscaled.sock` (403), answers a missing or bad `addr` with 400, an unknown peer with
 * 404 `no match for IP:port`, and a known one with its JSON.
 */
export async function startLocalApiStandIn(dir: string, peers: Record<string, string> = {}): Promise<LocalApiStandIn> {
  const socketPath = join(dir, 'tailscaled.sock');
  const sockets = new Set<import('node:net').Socket>();
  const state = { mode: 'normal' as StandInMode, slowMs: 5000 };
  const asked: string[] = [];
  const known = new Map(Object.entries(peers));
  const server: Server = createServer((req, res) => {
    const text = (status: number, body: string) => {
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' });
      res.end(`${body}\n`);
    };
    if (req.headers.host !== 'local-tailscaled.sock' && req.headers.host !== undefined) return text(403, 'invalid localapi request');
    const url = new URL(req.url ?? '/', 'http://local-tailscaled.sock');
    if (url.pathname !== '/localapi/v0/whois') return text(404, '404 page not found');
    const addr = url.searchParams.get('addr') ?? '';
    asked.push(addr);
    if (addr === '') return text(400, "missing 'addr' parameter");
    const ip = ipOf(addr);
    if (ip === undefined) return text(400, "invalid 'addr' parameter");
    const answer = () => {
      if (state.mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end('{"Node": {"StableID": "nDbSrv01CNTRL"}, "UserProfile": ');
      }
      const body = known.get(ip);
      if (body === undefined) return text(404, 'no match for IP:port');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (state.mode === 'slow') setTimeout(answer, state.slowMs).unref();
    else answer();
  });
  server.on('connection', (s) => { sockets.add(s); s.once('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  let closed: Promise<void> | undefined;
  return {
    socketPath, asked, peers: known,
    get mode() { return state.mode; },
    set mode(m) { state.mode = m; },
    get slowMs() { return state.slowMs; },
    set slowMs(ms) { state.slowMs = ms; },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closed;
    },
  };
}
