import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeDurable } from '../kernel/secret-files.js';
import { acquirePidFileLock } from '../log/store-lock.js';
import type { NoteSigner, NoteVerifier } from '../log/signed-note.js';
import { answerAddCheckpoint, type WitnessAnswer } from '../log/witness-add-checkpoint.js';
import { ADD_CHECKPOINT_PATH, MAX_REQUEST_BYTES } from '../log/witness-protocol.js';
import { CliError } from './cli-error.js';

/** What `vigil log witness serve` runs with (keys already loaded, never their paths' contents in a log line). */
export interface WitnessServeOptions {
  readonly witness: NoteSigner;
  readonly logKeys: readonly NoteVerifier[];
  /** The state folder: one file per log origin, the latest checkpoint cosigned for it. */
  readonly stateDir: string;
  readonly host: string;
  readonly port: number;
  readonly now: () => Date;
  readonly log: (line: Record<string, unknown>) => void;
}

/** A running witness: its URL (the submission prefix) and how to stop it. */
export interface RunningWitness {
  readonly url: string;
  stop(): Promise<void>;
}

/** The state folder, made 0700 when missing; one that group or others can reach is refused. */
function openStateDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077)
    throw new CliError(
      `refusing to start: ${dir} is accessible to group or others (mode ${mode.toString(8)}); run: chmod 700 ${dir}`,
      1,
    );
}

/** The file holding an origin's state: the origin encoded so that it is one file name. */
const stateFile = (dir: string, origin: string) => join(dir, `${encodeURIComponent(origin)}.checkpoint`);

/** The request's body, or undefined once it passed `max` bytes (the request is then answered 413). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.pause();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const plain = (res: ServerResponse, status: number, message: string) =>
  send(res, status, 'text/plain; charset=utf-8', `${message}\n`);

/**
 * Starts a C2SP tlog-witness server: only `POST /add-checkpoint`, bodies of at most 64 KiB, one request decided
 * at a time, and an origin's new state written durably (temp file, fsync, rename) before its 200 leaves, so two
 * requests can never roll the state back and a crash never loses a cosigned size.
 */
export async function startWitness(o: WitnessServeOptions): Promise<RunningWitness> {
  openStateDir(o.stateDir);
  const release = acquirePidFileLock(
    join(o.stateDir, 'witness.lock'),
    (owner) =>
      new CliError(`refusing to start: the witness state ${o.stateDir} is in use by process ${owner ?? '?'}`, 1),
  );
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let queue: Promise<unknown> = Promise.resolve();

  const decide = (body: string): WitnessAnswer => {
    const answer = answerAddCheckpoint(body, {
      logKeys: o.logKeys,
      witness: o.witness,
      time: Math.floor(o.now().getTime() / 1000),
      last: (origin) => {
        const file = stateFile(o.stateDir, origin);
        return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
      },
    });
    if (answer.save) writeDurable(stateFile(o.stateDir, answer.save.origin), answer.save.note);
    return answer;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://witness').pathname;
    if (path !== ADD_CHECKPOINT_PATH) return plain(res, 404, 'not found: this witness answers POST /add-checkpoint');
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return plain(res, 405, 'method not allowed: POST');
    }
    if (Number(req.headers['content-length'] ?? 0) > MAX_REQUEST_BYTES)
      return plain(res, 413, `request body past ${MAX_REQUEST_BYTES} bytes`);
    const bytes = await readBody(req, MAX_REQUEST_BYTES);
    if (!bytes) {
      res.setHeader('connection', 'close');
      return plain(res, 413, `request body past ${MAX_REQUEST_BYTES} bytes`);
    }
    let body: string;
    try {
      body = decoder.decode(bytes);
    } catch {
      return plain(res, 400, 'the body is not UTF-8');
    }
    // One decision at a time: the check of `old` and the write of the new state are one step.
    const answer = (queue = queue.catch(() => undefined).then(() => decide(body))) as Promise<WitnessAnswer>;
    const a = await answer;
    o.log({
      level: a.status === 200 ? 'info' : 'warn',
      msg: 'add-checkpoint',
      status: a.status,
      answer: a.body.slice(0, 200),
    });
    send(res, a.status, a.contentType, a.body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      o.log({ level: 'error', msg: 'add-checkpoint failed', error: (err as Error)?.message });
      if (!res.headersSent) plain(res, 500, 'internal error');
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  }).catch((err: unknown) => {
    release();
    throw new CliError(`refusing to start: cannot listen on ${o.host}:${o.port}: ${(err as Error).message}`, 1);
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(':') ? `[${o.host}]` : o.host;
  return {
    url: `http://${host}:${port}`,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      await queue.catch(() => undefined);
      release();
    },
  };
}

/** `HOST:PORT` (`[::1]:PORT` for IPv6) as host and port, or undefined when it is not one. */
export function parseListen(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  if (!m || port > 65_535) return undefined;
  return { host: (m[1] ?? m[2])!, port };
}
