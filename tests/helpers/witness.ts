import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { CLI } from './cli.js';
import { formatCheckpoint } from '../../src/log/checkpoint.js';
import { consistencyPath, leafHash, nodeHash, rootAt } from '../../src/log/merkle.js';
import { COSIGNATURE_V1, signNote, type NoteSigner } from '../../src/log/signed-note.js';

/**
 * Where a store's instance keeps the key that signs its heads by default: `keys/` beside the store folder (docs/log.md,
 * "Signed heads"). The one place tests name it: a test that copies it (a forked instance) follows it here.
 */
export function instanceKeyFile(storePath: string): string {
  return join(dirname(storePath), 'keys', 'log-signing.key');
}

/** A log key and a witness key for tests (fixed seeds). */
export const LOG_SIGNER: NoteSigner = { name: 'vigil.log/test-witness', seed: new Uint8Array(32).fill(3) };
export const WITNESS_SIGNER: NoteSigner = { name: 'witness.test/w1', seed: new Uint8Array(32).fill(5), type: COSIGNATURE_V1 };

/** An in-memory log of string entries: its signed checkpoints and consistency proofs, as a Vigil instance makes them. */
export function memoryLog(entries: readonly string[], signer: NoteSigner = LOG_SIGNER) {
  const leaves = entries.map((e) => leafHash(new TextEncoder().encode(e)));
  const node = (level: number, index: number): Uint8Array =>
    level === 0 ? leaves[index]! : nodeHash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1));
  return {
    note: (size = entries.length) => signNote(formatCheckpoint({ origin: signer.name, size, root: rootAt(node, size) }), signer),
    proof: (from: number, to = entries.length) => consistencyPath(node, from, to).map((h) => Buffer.from(h).toString('base64')),
  };
}

/** `n` entries named with `tag`: two logs with different tags fork at their first entry. */
export const entries = (n: number, tag = 'a') => Array.from({ length: n }, (_, i) => `${tag}-${i}`);

/** A `vigil log witness serve` child process: its URL and how to stop it. */
export interface WitnessProcess {
  readonly url: string;
  readonly output: () => string;
  /** Stops it with SIGTERM and resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `vigil log witness serve ...args` in `cwd` and waits for its `listening` line. */
export async function startWitnessServe(args: readonly string[], cwd: string): Promise<WitnessProcess> {
  const proc = spawn(process.execPath, [CLI, 'log', 'witness', 'serve', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the witness did not start: ${out}`)), 30_000);
    proc.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    });
    proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`the witness exited with ${code}: ${out}`)); });
  });
  return { url, output: () => out, stop: () => { proc.kill('SIGTERM'); return exited; } };
}

/** A loopback port that was free a moment ago (for a process told its address before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
