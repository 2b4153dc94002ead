import * as v from 'valibot';
import { IsoDateTime } from '../events/normalized-event.js';
import { credentialFingerprint, readRegistry, writeRegistry, type Credential } from '../auth/registry.js';
import { ROLES, type Role } from '../auth/roles.js';
import { ensureSecretDir, refuseForeignOwner, secretFileProblem } from '../kernel/secret-files.js';
import { generateToken, hashToken } from '../auth/tokens.js';
import { CliError } from './cli-error.js';

/** Re-exported for the modules that took it from here. */
export { CliError };

function safeRegistry(path: string): Credential[] {
  refuseForeignOwner(path);
  ensureSecretDir(path);
  const problem = secretFileProblem(path);
  if (problem) throw new CliError(problem);
  return readRegistry(path);
}

/**
 * `vigil api-token-generate`: records a new credential and returns `{token, credential, fingerprint}`
 * (the only time the token is shown; the fingerprint is what `credential disable --fingerprint` takes).
 */
export function apiTokenGenerate(
  path: string,
  principalId: string,
  role: string,
  opts: { expiresAt?: string; collectorId?: string; now?: Date },
): { token: string; credential: Credential; fingerprint: string } {
  if (!(ROLES as readonly string[]).includes(role))
    throw new CliError(`unknown role ${role}; one of: ${ROLES.join(', ')}`, 2);
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/.test(principalId))
    throw new CliError('principal id: 1-128 characters, letters, digits, . _ @ -', 2);
  if (opts.expiresAt !== undefined && !v.is(IsoDateTime, opts.expiresAt))
    throw new CliError('--expires-at: expected an ISO 8601 date-time', 2);
  if (opts.collectorId !== undefined && role !== 'collector')
    throw new CliError('--collector-id binds a collector credential; use it with the collector role', 2);
  const credentials = safeRegistry(path);
  const token = generateToken();
  const credential: Credential = {
    id: principalId,
    tokenHash: hashToken(token),
    roles: [role as Role],
    ...(opts.expiresAt !== undefined ? { expiresAt: opts.expiresAt } : {}),
    disabled: false,
    ...(opts.collectorId !== undefined ? { collectorId: opts.collectorId } : {}),
    createdAt: (opts.now ?? new Date()).toISOString(),
  };
  writeRegistry(path, [...credentials, credential]);
  return { token, credential, fingerprint: credentialFingerprint(credential.tokenHash) };
}

/**
 * `vigil credential list`: every credential without its hash, with the fingerprint that tells
 * rotations apart and `createdAt` (null for credentials created before it was written). Last use is
 * the running service's to know: `GET /api/v1/credentials` (docs/configuration.md).
 */
export function listCredentials(
  path: string,
): Array<Omit<Credential, 'tokenHash' | 'createdAt'> & { fingerprint: string; createdAt: string | null }> {
  return safeRegistry(path).map(({ tokenHash, createdAt, ...rest }) => ({
    ...rest,
    fingerprint: credentialFingerprint(tokenHash),
    createdAt: createdAt ?? null,
  }));
}

/** `vigil credential disable|enable <id> [--fingerprint F]`: flips `disabled`, keeping the audit identity. */
export function setCredentialDisabled(path: string, id: string, disabled: boolean, fingerprint?: string): number {
  const credentials = safeRegistry(path);
  const targets = credentials.filter(
    (c) => c.id === id && (fingerprint === undefined || c.tokenHash.startsWith(fingerprint)),
  );
  if (targets.length === 0)
    throw new CliError(`no credential ${id}${fingerprint ? ` with fingerprint ${fingerprint}` : ''}`);
  if (targets.length > 1 && fingerprint === undefined) {
    throw new CliError(
      `${id} has ${targets.length} credentials; name one with --fingerprint (see vigil credential list): ` +
        `${targets.map((t) => t.tokenHash.slice(0, 12)).join(', ')}`,
    );
  }
  writeRegistry(
    path,
    credentials.map((c) => (targets.includes(c) ? { ...c, disabled } : c)),
  );
  return targets.length;
}
