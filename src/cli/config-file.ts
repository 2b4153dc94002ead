import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { ConfigSchema, type Config, type MeshConfig } from '../services/config-schema.js';
import { formatIssues } from '../kernel/issues.js';

/** A configuration problem: start-up stops with this message, which names the key. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Loads the configuration (and the absolute path of its file) from `--config FILE`, else `VIGIL_CONFIG`, else
 * `./vigil.config.json` when present, else defaults. Relative paths in it resolve against the file's folder (or the
 * working directory for defaults).
 */
export function loadConfig(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv,
  cwd: string,
): { config: Config; source: string } {
  const path =
    explicit ?? env.VIGIL_CONFIG ?? (existsSync(resolve(cwd, 'vigil.config.json')) ? 'vigil.config.json' : undefined);
  let raw: unknown = {};
  let base = cwd;
  if (path !== undefined) {
    const full = resolve(cwd, path);
    base = dirname(full);
    let text: string;
    try {
      text = readFileSync(full, 'utf8');
    } catch (err) {
      throw new ConfigError(`cannot read config file ${full}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
    try {
      raw = JSON.parse(text);
    } catch {
      throw new ConfigError(`config file ${full} is not valid JSON`);
    }
  }
  const parsed = v.safeParse(ConfigSchema, raw);
  if (!parsed.success) {
    throw new ConfigError(
      `invalid configuration${path ? ` in ${path}` : ''}:\n  ${formatIssues(parsed.issues, 'config')
        .map((l) => l.replace(/^config\.?/, '').replace(/Invalid key: Expected never but received .*$/, 'unknown key'))
        .join('\n  ')}`,
    );
  }
  const c = parsed.output;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  return {
    source: path !== undefined ? resolve(cwd, path) : '(defaults)',
    config: {
      ...c,
      auth: {
        ...c.auth,
        credentialsFile: abs(c.auth.credentialsFile),
        ...(c.auth.mesh ? { mesh: meshPaths(c.auth.mesh, abs) } : {}),
      },
      storage: { ...c.storage, path: abs(c.storage.path) },
    },
  };
}

/** `auth.mesh` with its socket and allowlist file resolved against the config's folder. */
function meshPaths(mesh: MeshConfig, abs: (p: string) => string): MeshConfig {
  return {
    ...mesh,
    socketPath: abs(mesh.socketPath),
    ...(mesh.allowlistFile !== undefined ? { allowlistFile: abs(mesh.allowlistFile) } : {}),
  };
}

/** Where the listen address of `vigil serve` came from, for its start line and its refusals. */
export interface ListenSource {
  readonly host: string;
  readonly port: string;
}

function portOf(value: string, name: string): number {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535)
    throw new ConfigError(
      `${name}: expected a port number 0..65535 (0 picks a free one), got ${JSON.stringify(value.slice(0, 32))}`,
    );
  return Number(value);
}

function hostOf(value: string, name: string): string {
  if (value.length === 0 || value.length > 255 || /\s/.test(value))
    throw new ConfigError(`${name}: expected a host name or address such as 127.0.0.1 or 0.0.0.0`);
  return value;
}

/**
 * Applies `--host`/`--port`, else `VIGIL_HOST`/`VIGIL_PORT`, over `server.host`/`server.port` of the
 * config in force (which came from `source`): flag, then environment, then file, then default.
 */
export function withListenOverrides(
  config: Config,
  flags: { host?: string | undefined; port?: string | undefined },
  env: NodeJS.ProcessEnv,
  source: string,
): { config: Config; from: ListenSource } {
  const fileSays = (key: string) =>
    source === '(defaults)' ? `the default ${key} (no config file)` : `${key} in ${source}`;
  const pick = <T>(
    flag: string | undefined,
    flagName: string,
    envName: string,
    key: string,
    parse: (v: string, n: string) => T,
    current: T,
  ): [T, string] => {
    if (flag !== undefined) return [parse(flag, flagName), flagName];
    const fromEnv = env[envName];
    if (fromEnv !== undefined && fromEnv !== '') return [parse(fromEnv, envName), envName];
    return [current, fileSays(key)];
  };
  const [host, hostFrom] = pick(flags.host, '--host', 'VIGIL_HOST', 'server.host', hostOf, config.server.host);
  const [port, portFrom] = pick(flags.port, '--port', 'VIGIL_PORT', 'server.port', portOf, config.server.port);
  return { config: { ...config, server: { ...config.server, host, port } }, from: { host: hostFrom, port: portFrom } };
}
