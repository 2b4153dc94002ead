import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from './paths.js';

/** The compiled CLI entry point. */
export const CLI = repoPath('dist', 'src', 'cli', 'main.js');

/** Runs `vigil ...args` to completion. */
export function runCli(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, encoding: 'utf8', input: opts.input ?? '', timeout: 60_000, maxBuffer: 256 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A new credential's token from `vigil api-token-generate principal role` (fails the test when it cannot be made). */
export function apiToken(config: string, principal: string, role: string): string {
  const generated = runCli(['api-token-generate', principal, role, '--config', config]);
  if (generated.status !== 0) throw new Error(`api-token-generate ${principal} ${role}: ${generated.stderr}`);
  return (JSON.parse(generated.stdout) as { token: string }).token;
}

/** Writes a config file for a temp instance on a free port and returns its path. */
export function writeTestConfig(dir: string, extra: Record<string, unknown> = {}): string {
  const path = join(dir, 'vigil.config.json');
  writeFileSync(path, JSON.stringify({
    server: { host: '127.0.0.1', port: 0, allowLoopbackAdmin: false },
    auth: { credentialsFile: 'secrets/credentials.json' },
    storage: { path: 'store' },
    ...extra,
  }));
  return path;
}

/** A `vigil serve` child process and its URL. */
export interface ServeProcess {
  readonly url: string;
  readonly proc: ChildProcess;
  readonly output: () => string;
  /** Resolves with the exit code once the process ended. */
  readonly exited: Promise<number | null>;
}

/** Starts `vigil serve --config F [...args]` (with `env` added) and waits for its `listening` line. */
export async function startServe(config: string, cwd: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [CLI, 'serve', '--config', config, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${out}`)), 60_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"msg":"listening","url":"([^"]+)"/.exec(out);
      if (m) { clearTimeout(timer); resolve(m[1]!); }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
    void exited.then((code) => { clearTimeout(timer); reject(new Error(`serve exited with ${code}: ${out}`)); });
  });
  return { url, proc, output: () => out, exited };
}

/**
 * Every stored event id of `adapter` as a running instance lists them, page by page, duplicates
 * kept (an event stored twice is listed twice). `get` fetches a page (a caller may retry 503s).
 */
export async function listedEventIds(url: string, viewerToken: string, adapter: string, get: (pageUrl: string) => Promise<Response> = (u) => fetch(u, { headers: { authorization: `Bearer ${viewerToken}` } })): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: Response = await get(`${url}/api/v1/events?adapter=${encodeURIComponent(adapter)}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    if (res.status !== 200) throw new Error(`listing events answered ${res.status}: ${await res.text()}`);
    const page = await res.json() as { events: Array<{ id: string }>; nextCursor: string | null };
    ids.push(...page.events.map((e) => e.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}

/** The ids of every stored event of `adapter`, read page by page from a running instance. */
export async function storedEventIds(url: string, viewerToken: string, adapter: string): Promise<Set<string>> {
  return new Set(await listedEventIds(url, viewerToken, adapter));
}
