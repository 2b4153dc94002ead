import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { ConfigSchema, type Config, type MeshConfig } from '../config/schema.js';
import { formatIssues } from '../http/errors.js';

/** A configuration problem: start-up stops with this message, which names the key. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

/**
 * Loads the configuration from `--config FILE`, else `VIGIL_CONFIG`, else `./vigil.config.json`
 * when present, else defaults. Relative paths in it resolve against the file's folder (or the
 * working directory for defaults).
 */
export function loadConfig(explicit: string | undefined, env: NodeJS.ProcessEnv, cwd: string): { config: Config; source: string } {
  const path = explicit ?? env.VIGIL_CONFIG ?? (existsSync(resolve(cwd, 'vigil.config.json')) ? 'vigil.config.json' : undefined);
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
    throw new ConfigError(`invalid configuration${path ? ` in ${path}` : ''}:\n  ${formatIssues(parsed.issues, 'config').map((l) => l.replace(/^config\.?/, '').replace(/Invalid key: Expected never but received .*$/, 'unknown key')).join('\n  ')}`);
  }
  const c = parsed.output;
  const abs = (p: string) => (isAbsolute(p) ? p : resolve(base, p));
  return {
    source: path ?? '(defaults)',
    config: { ...c, auth: { ...c.auth, credentialsFile: abs(c.auth.credentialsFile), ...(c.auth.mesh ? { mesh: meshPaths(c.auth.mesh, abs) } : {}) }, storage: { ...c.storage, path: abs(c.storage.path) } },
  };
}

/** `auth.mesh` with its socket and allowlist file resolved against the config's folder. */
function meshPaths(mesh: MeshConfig, abs: (p: string) => string): MeshConfig {
  return { ...mesh, socketPath: abs(mesh.socketPath), ...(mesh.allowlistFile !== undefined ? { allowlistFile: abs(mesh.allowlistFile) } : {}) };
}
