import { request, type ClientRequest } from 'node:http';

/** The answer of one whois question: the peer's JSON, an unknown peer, or why the daemon could not say. */
export type WhoIsAnswer =
  | { readonly kind: 'found'; readonly body: string }
  | { readonly kind: 'unknown' }
  | { readonly kind: 'failed'; readonly reason: string };

/** Bounds on one LocalAPI call. */
export interface LocalApiLimits {
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

/** The Host header the Tailscale clients send over the socket; the daemon refuses most others. */
const LOCALAPI_HOST = 'local-tailscaled.sock';

/** `ip:port` as the daemon parses it (`netip.ParseAddrPort`): IPv6 in brackets. */
export function addrPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * Asks the local daemon who `addr` (`ip:port`) is: `GET /localapi/v0/whois` over its Unix socket,
 * never over TCP, so the answer comes from the daemon and no one on the network. The whole call is
 * bounded by `timeoutMs` and the answer by `maxBytes`; every error is an answer, never a throw.
 */
export function queryWhoIs(socketPath: string, addr: string, limits: LocalApiLimits): Promise<WhoIsAnswer> {
  return new Promise((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    let req: ClientRequest | undefined;
    const settle = (answer: WhoIsAnswer): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req?.destroy();
      resolve(answer);
    };
    timer = setTimeout(
      () => settle({ kind: 'failed', reason: `no answer within ${limits.timeoutMs} ms` }),
      limits.timeoutMs,
    );
    try {
      req = sendWhoIs(socketPath, addr, limits, settle);
    } catch (err) {
      settle({ kind: 'failed', reason: (err as NodeJS.ErrnoException).code ?? (err as Error).message });
    }
  });
}

/** Sends the whois request and reports its outcome, once, to `settle`. */
function sendWhoIs(
  socketPath: string,
  addr: string,
  limits: LocalApiLimits,
  settle: (answer: WhoIsAnswer) => void,
): ClientRequest {
  const req = request(
    {
      socketPath,
      method: 'GET',
      path: `/localapi/v0/whois?addr=${encodeURIComponent(addr)}`,
      headers: { host: LOCALAPI_HOST, accept: 'application/json' },
      agent: false,
    },
    (res) => {
      const status = res.statusCode ?? 0;
      if (status === 404) return settle({ kind: 'unknown' });
      if (status !== 200) return settle({ kind: 'failed', reason: `daemon answered ${status}` });
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes)
          return settle({ kind: 'failed', reason: `answer larger than ${limits.maxBytes} bytes` });
        chunks.push(chunk);
      });
      res.on('end', () => settle({ kind: 'found', body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', (err) => settle({ kind: 'failed', reason: err.message }));
    },
  );
  req.on('error', (err: NodeJS.ErrnoException) => settle({ kind: 'failed', reason: err.code ?? err.message }));
  req.end();
  return req;
}
