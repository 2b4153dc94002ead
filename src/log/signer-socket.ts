/**
 * The signer as a process of its own (`vigil signer`), reached over a Unix socket: it holds the key
 * and the keeper's state, the writer holds neither (docs/log.md, "Signed heads"). One JSON object a
 * line each way; answers come in the order of the requests.
 *
 *   → {"id":1,"op":"hello"}                                    ← {"id":1,"key":"<verifier key>"}
 *   → {"id":2,"op":"resume","head":{note,size,roots,proof?}}   ← {"id":2,"answer":{...ResumeAnswer}}
 *     (an answer that takes the store up carries `rotations`, the key rotation notes that led to the signer's key)
 *   → {"id":3,"op":"sign","leaves":"<base64 of 32-byte hashes>","size":N,"root":"<base64>"} ← {"id":3,"note":"..."}
 *   → {"id":4,"op":"publish","note":"<signed head>"}           ← {"id":4}
 *   any refusal                                                 ← {"id":n,"error":"..."}
 */
import { chmodSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { HeadSigner, KeeperHost } from './head-signer.js';
import type { PresentedHead, ResumeAnswer } from './head-keeper.js';
import { parseVerifierKey, verifierKeyString, type NoteVerifier } from './signed-note.js';

/** The longest request or answer line: a commit's leaves (32 bytes a record, base64) fit many times over. */
export const MAX_SIGNER_LINE = 64 * 1024 * 1024;

interface Request {
  readonly id: number;
  readonly op: string;
  readonly head?: PresentedHead;
  readonly leaves?: string;
  readonly size?: number;
  readonly root?: string;
  readonly note?: string;
}

/** Reads newline-delimited JSON from a socket, bounded per line; calls `onLine` with each parsed value. */
function lines(socket: Socket, onLine: (value: unknown) => void, onError: (message: string) => void): void {
  let buffered: Buffer[] = [];
  let length = 0;
  socket.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10); nl >= 0; nl = chunk.indexOf(10, start)) {
      const line = Buffer.concat([...buffered, chunk.subarray(start, nl)]).toString('utf8');
      buffered = [];
      length = 0;
      start = nl + 1;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        onError('not a JSON line');
        return;
      }
      onLine(value);
    }
    length += chunk.length - start;
    if (length > MAX_SIGNER_LINE) {
      onError(`a line longer than ${MAX_SIGNER_LINE} bytes`);
      return;
    }
    if (start < chunk.length) buffered.push(chunk.subarray(start));
  });
}

function leavesOf(text: string): Uint8Array[] {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.byteLength % 32 !== 0) throw new Error('leaves are not a whole number of 32-byte hashes');
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.byteLength; i += 32) out.push(new Uint8Array(bytes.subarray(i, i + 32)));
  return out;
}

/** Answers one request with the keeper (throws what it refuses). */
function answer(host: KeeperHost, req: Request): Record<string, unknown> {
  switch (req.op) {
    case 'hello':
      return { key: verifierKeyString(host.keeper.verifier) };
    case 'resume':
      if (typeof req.head !== 'object' || req.head === null) throw new Error('resume needs a head');
      return { answer: host.resume(req.head) };
    case 'sign':
      if (typeof req.leaves !== 'string' || !Number.isSafeInteger(req.size) || typeof req.root !== 'string')
        throw new Error('sign needs leaves, size and root');
      return { note: host.extend(leavesOf(req.leaves), req.size!, new Uint8Array(Buffer.from(req.root, 'base64'))) };
    case 'publish':
      if (typeof req.note !== 'string') throw new Error('publish needs the signed head');
      host.publish(req.note);
      return {};
    default:
      throw new Error(`unknown op ${String(req.op).slice(0, 40)}`);
  }
}

/**
 * Serves `host` on the Unix socket at `path` (mode 0660: the writer reaches it through the socket's
 * group, docs/log.md). A stale socket file is replaced. Resolves once listening.
 */
export async function serveSigner(host: KeeperHost, path: string): Promise<Server> {
  rmSync(path, { force: true });
  const server = createServer((socket) => {
    lines(
      socket,
      (value) => {
        const req = value as Request;
        const id = typeof req?.id === 'number' ? req.id : 0;
        let reply: Record<string, unknown>;
        try {
          reply = { id, ...answer(host, req) };
        } catch (err) {
          reply = { id, error: (err as Error).message };
        }
        socket.write(`${JSON.stringify(reply)}\n`);
      },
      (message) => {
        socket.end(`${JSON.stringify({ id: 0, error: message })}\n`);
      },
    );
    socket.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o660);
  return server;
}

/**
 * Connects to the signer at `path`, trying again for `waitMs` (the signer's unit may start after
 * the writer's), and asks for its key.
 */
export async function socketHeadSigner(path: string, waitMs = 10_000): Promise<HeadSigner> {
  const deadline = Date.now() + waitMs;
  let socket: Socket;
  for (;;) {
    try {
      socket = await new Promise<Socket>((resolve, reject) => {
        const s = connect(path, () => resolve(s));
        s.once('error', reject);
      });
      break;
    } catch (err) {
      if (Date.now() >= deadline)
        throw new Error(`no head signer answers at ${path}: ${(err as Error).message} (is vigil signer running?)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  const waiting = new Map<number, { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  let next = 1;
  let broken: Error | undefined;
  const breakAll = (err: Error) => {
    broken ??= err;
    for (const w of waiting.values()) w.reject(broken);
    waiting.clear();
  };
  lines(
    socket,
    (value) => {
      const reply = value as { id: number; error?: string } & Record<string, unknown>;
      const w = waiting.get(reply.id);
      if (!w) return breakAll(new Error(`the head signer said: ${reply.error ?? 'an answer to no request'}`));
      waiting.delete(reply.id);
      if (typeof reply.error === 'string') w.reject(new Error(`the head signer refused: ${reply.error}`));
      else w.resolve(reply);
    },
    (message) => breakAll(new Error(`the head signer's answer was unreadable: ${message}`)),
  );
  socket.on('error', (err) => breakAll(new Error(`the head signer's connection failed: ${err.message}`)));
  socket.on('close', () => breakAll(new Error('the head signer closed the connection')));
  const ask = (req: Record<string, unknown>): Promise<Record<string, unknown>> => {
    if (broken) return Promise.reject(broken);
    const id = next++;
    return new Promise((resolve, reject) => {
      waiting.set(id, { resolve, reject });
      socket.write(`${JSON.stringify({ id, ...req })}\n`);
    });
  };
  const hello = await ask({ op: 'hello' });
  const verifier: NoteVerifier | undefined = parseVerifierKey(String(hello.key));
  if (!verifier) throw new Error(`the head signer at ${path} gave no verifier key`);
  return {
    verifier,
    resume: async (head) => (await ask({ op: 'resume', head })).answer as ResumeAnswer,
    async sign(leaves, size, root) {
      const reply = await ask({
        op: 'sign',
        leaves: Buffer.concat(leaves).toString('base64'),
        size,
        root: Buffer.from(root).toString('base64'),
      });
      return String(reply.note);
    },
    publish: async (note) => void (await ask({ op: 'publish', note })),
    async close() {
      broken ??= new Error('the head signer connection is closed');
      socket.end();
    },
  };
}
