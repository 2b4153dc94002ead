import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { CLI } from '../helpers/cli.js';

/** A running `vigil ...` child process. */
export interface Child { readonly proc: ChildProcess; output(): string; readonly exited: Promise<number | null> }

/** Starts `vigil ...args`; `input` is written to stdin (secrets never go in argv). */
export function startChild(args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; cwd?: string } = {}): Child {
  const proc = spawn(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stdin!.end(opts.input ?? '');
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  return { proc, output: () => out, exited };
}

/** Waits until `check` returns a value (polling every 50 ms) or fails after `ms`. */
export async function waitFor<T>(what: string, check: () => T | undefined | Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits for the `listening` line of a server child and returns its URL. */
export function listeningUrl(child: Child): Promise<string> {
  return waitFor('the listening line', async () => {
    const m = /"msg":"listening","url":"([^"]+)"/.exec(child.output());
    if (!m && child.proc.exitCode !== null) throw new Error(`exited: ${child.output()}`);
    return m?.[1];
  });
}

/** A free loopback TCP port. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Stops a child with SIGTERM and waits for it. */
export async function stopChild(child: Child): Promise<void> {
  if (child.proc.exitCode === null) child.proc.kill('SIGTERM');
  await child.exited;
}
