import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { IsoDateTime } from '../events/normalized-event.js';
import { ROLES, type Role } from './roles.js';
import { entryForToken, watchRegistryFile } from './registry-file.js';
import { ensureSecretDir, writeSecretFile } from '../kernel/secret-files.js';

const PrincipalId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, 'expected 1-128 characters: letters, digits, . _ @ -'),
);

/** One credential of the registry (spec 2.6 and 5.3). */
export const CredentialSchema = v.strictObject({
  id: PrincipalId,
  tokenHash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected a 64-character lowercase SHA-256 hex digest')),
  roles: v.pipe(v.array(v.picklist(ROLES)), v.minLength(1), v.maxLength(ROLES.length)),
  expiresAt: v.optional(IsoDateTime),
  disabled: v.boolean(),
  collectorId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
  /** When `vigil api-token-generate` created it. */
  createdAt: v.optional(IsoDateTime),
});

/** The owner-only registry file: `{credentials: [...]}`. */
export const RegistrySchema = v.strictObject({ credentials: v.pipe(v.array(CredentialSchema), v.maxLength(10_000)) });

/** One credential. */
export type Credential = v.InferOutput<typeof CredentialSchema>;

/** An authenticated principal (spec 2.5) plus what the credential binds. */
export interface Principal {
  readonly id: string;
  readonly roles: readonly Role[];
  readonly displayName: string;
  readonly loginName: string;
  readonly authentication: string;
  readonly collectorId?: string;
  /** The fingerprint of the bearer credential that authenticated the request (credentialFingerprint). */
  readonly credential?: string;
}

/**
 * The fingerprint of a credential: the first 12 hex digits of its token hash, shown by `vigil credential list` and
 * taken by `--fingerprint`.
 */
export function credentialFingerprint(tokenHash: string): string {
  return tokenHash.slice(0, 12);
}

/** Formats valibot issues as `path: message` lines. */
export function issueLines(issues: readonly v.BaseIssue<unknown>[]): string[] {
  return issues.map((i) => `${v.getDotPath(i) ?? '(root)'}: ${i.message}`);
}

/** Reads and validates a registry file; a missing file is an empty registry. */
export function readRegistry(path: string): Credential[] {
  if (!existsSync(path)) return [];
  const parsed = v.safeParse(RegistrySchema, JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`credentials file ${path} is invalid: ${issueLines(parsed.issues).join('; ')}`);
  return parsed.output.credentials;
}

/** Writes the registry (0600 in a 0700 directory, atomically). */
export function writeRegistry(path: string, credentials: readonly Credential[]): void {
  ensureSecretDir(path);
  writeSecretFile(path, `${JSON.stringify({ credentials }, null, 2)}\n`);
}

/** A live view of the registry file: changes are picked up without a restart. */
export interface CredentialRegistry {
  /** The principal for a presented token, or undefined (unknown, disabled, expired: indistinguishable). */
  authenticate(token: string, nowMs: number): Principal | undefined;
  /** The principal of an enabled, unexpired credential by its id (a console session's credential), or undefined. */
  principalById(id: string, nowMs: number): Principal | undefined;
  /** Number of credentials currently loaded. */
  size(): number;
}

/**
 * Opens the registry at `path`, re-reading it when its size, mtime or inode change (checked at
 * most every `recheckMs`). A file that becomes invalid or unsafe fails closed: no token is accepted
 * until it is fixed, and `onError` is told why (never with token material).
 */
export function openCredentialRegistry(
  path: string,
  onError: (message: string) => void = () => {},
  recheckMs = 500,
  onLoaded?: (credentials: readonly Credential[]) => void,
): CredentialRegistry {
  const current = watchRegistryFile(path, readRegistry, onError, recheckMs, onLoaded);
  const principalOf = (found: Credential | undefined, nowMs: number): Principal | undefined => {
    if (!found || found.disabled) return undefined;
    if (found.expiresAt !== undefined && Date.parse(found.expiresAt) <= nowMs) return undefined;
    return {
      id: found.id,
      roles: found.roles,
      displayName: found.id,
      loginName: found.id,
      authentication: 'bearer',
      ...(found.collectorId ? { collectorId: found.collectorId } : {}),
      credential: credentialFingerprint(found.tokenHash),
    };
  };
  return {
    authenticate: (token, nowMs) => principalOf(entryForToken(current(), token), nowMs),
    principalById: (id, nowMs) =>
      principalOf(
        current().find((c) => c.id === id),
        nowMs,
      ),
    size() {
      return current().length;
    },
  };
}
