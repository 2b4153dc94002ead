import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { RequestError, getRequestListener } from '@hono/node-server';

/** Node's limit on a request's header block (`--max-http-header-size`), named in the 431 answer. */
const HEADER_BYTES = 16 * 1024;

/** The status and message of a request Node's HTTP parser refused before the app saw it. */
function clientErrorAnswer(code: string | undefined): [number, string, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', `request headers exceed the limit of ${HEADER_BYTES} bytes`];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'request not received in time'];
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
      return [400, 'Bad Request', 'malformed HTTP request: invalid Content-Length'];
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return [400, 'Bad Request', 'malformed HTTP request: invalid Transfer-Encoding'];
    default:
      return [400, 'Bad Request', 'malformed HTTP request'];
  }
}

/** Why a connection was cut or refused before the app saw its request (counted in /metrics). */
export type ConnectionRefusal = 'request_timeout' | 'per_address_cap';

/**
 * How a server guards its connections, the same on every route, authenticated or not: the time a
 * client has to send its header block and its whole request, and how many connections one source
 * address may hold open at once (an address `exempt` says, such as a trusted proxy, has no cap).
 */
export interface ConnectionLimits {
  readonly headerSeconds: number;
  readonly requestSeconds: number;
  readonly connectionsPerAddress: number;
  readonly exempt?: (address: string) => boolean;
  readonly onRefused?: (reason: ConnectionRefusal) => void;
}

/** The limits of a server whose configuration names none (the setup authority): the instance's defaults. */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  headerSeconds: 10,
  requestSeconds: 30,
  connectionsPerAddress: 256,
};

/** How often Node checks its connections against the header and request timeouts (its default is 30 s). */
const TIMEOUT_CHECK_MS = 1000;

/**
 * Answers what Node's HTTP parser refuses (oversized headers, a bad Content-Length, garbage, a
 * request not received in time) with an ErrorResponse like every other error, instead of Node's
 * empty answer, then closes the socket.
 */
export function answerClientErrors(server: Server, onRefused?: (reason: ConnectionRefusal) => void): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') onRefused?.('request_timeout');
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason, message] = clientErrorAnswer(err.code);
    const body = JSON.stringify({ error: message });
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ` +
        `${Buffer.byteLength(body)}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: ` +
        `close\r\n\r\n${body}`,
    );
  });
}

const UNREADABLE = JSON.stringify({
  error: 'malformed HTTP request: missing or invalid Host header, or a request target that is not a path',
});
const UNREADABLE_HEADERS = {
  'content-type': 'application/json',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  connection: 'close',
};

/**
 * The adapter's errors as ErrorResponses: a request Node parsed but that cannot become a fetch
 * Request (a malformed Host, `OPTIONS *`, a target that is not a path) is a 400, not the adapter's
 * empty one; anything else the app let through (it answers its own errors) a 500 with nothing more.
 */
export function unreadableRequest(err: unknown): Response {
  if (err instanceof RequestError) return new Response(UNREADABLE, { status: 400, headers: UNREADABLE_HEADERS });
  return new Response(JSON.stringify({ error: 'internal error' }), { status: 500, headers: UNREADABLE_HEADERS });
}

/**
 * Closes a connection from an address that already holds `limits.connectionsPerAddress` open, so
 * one client cannot take every socket of the server.
 */
function capConnectionsPerAddress(server: Server, limits: ConnectionLimits): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? 'unknown';
    if (limits.exempt?.(address)) return;
    const held = open.get(address) ?? 0;
    if (held >= limits.connectionsPerAddress) {
      limits.onRefused?.('per_address_cap');
      socket.destroy();
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/** Serves a fetch handler on host:port with the service's HTTP settings and `limits`; resolves once listening. */
export function listen(
  fetch: (req: Request, env: { incoming: unknown }) => Response | Promise<Response>,
  host: string,
  port: number,
  limits: ConnectionLimits = DEFAULT_CONNECTION_LIMITS,
): Promise<Server> {
  return new Promise<Server>((resolve, reject) => {
    const app = getRequestListener(fetch as never, { hostname: host, errorHandler: unreadableRequest });
    const requestTimeout = limits.requestSeconds * 1000;
    // Node refuses a header timeout longer than the request timeout; the header block is part of the request.
    const headersTimeout = Math.min(limits.headerSeconds * 1000, requestTimeout);
    const options = {
      requireHostHeader: false,
      requestTimeout,
      headersTimeout,
      connectionsCheckingInterval: TIMEOUT_CHECK_MS,
    };
    // Node answers an HTTP/1.1 request without Host (RFC 9112 3.2) itself, with an empty 400; it is
    // answered here instead, with an ErrorResponse.
    const s = createServer(options, (req, res) => {
      if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
        res.writeHead(400, { ...UNREADABLE_HEADERS, 'content-length': Buffer.byteLength(UNREADABLE) }).end(UNREADABLE);
        return;
      }
      void app(req, res);
    });
    s.once('error', reject);
    answerClientErrors(s, limits.onRefused);
    capConnectionsPerAddress(s, limits);
    s.listen(port, host, () => resolve(s));
  });
}
