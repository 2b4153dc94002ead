import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { writeSecretFile } from '../kernel/secret-files.js';
import { entryForToken, watchRegistryFile } from '../auth/registry-file.js';

const Id = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/, 'expected 1-128 characters: letters, digits, . _ @ -'),
);

/** The prefix of browser account tokens. */
export const ACCOUNT_TOKEN_PREFIX = 'lsa_';

/** One browser account of the setup authority. */
export const AccountSchema = v.strictObject({
  tenantId: Id,
  userId: Id,
  displayName: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  email: v.pipe(v.string(), v.maxLength(320), v.email()),
  tokenHash: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/, 'expected a SHA-256 hex digest')),
  disabled: v.boolean(),
});

/** One account. */
export type Account = v.InferOutput<typeof AccountSchema>;

const AccountsFileSchema = v.strictObject({ accounts: v.pipe(v.array(AccountSchema), v.maxLength(10_000)) });

/** Reads the owner-only account registry; a missing file is empty. */
export function readAccounts(path: string): Account[] {
  if (!existsSync(path)) return [];
  const parsed = v.safeParse(AccountsFileSchema, JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success)
    throw new Error(
      `account registry ${path} is invalid: ` +
        `${parsed.issues.map((i) => `${v.getDotPath(i) ?? '(root)'}: ${i.message}`).join('; ')}`,
    );
  return parsed.output.accounts;
}

/** Writes the registry atomically, 0600 in a 0700 directory. */
export function writeAccounts(path: string, accounts: readonly Account[]): void {
  writeSecretFile(path, `${JSON.stringify({ accounts }, null, 2)}\n`);
}

/** A live view of the registry: edits by `vigil setup-authority account ...` apply without a restart. */
export interface AccountRegistry {
  /** The enabled account a token opens, or undefined. */
  authenticate(token: string): Account | undefined;
  /** The enabled account with these ids, or undefined (disabled accounts lose their sessions). */
  find(tenantId: string, userId: string): Account | undefined;
}

/** Opens the registry live (`watchRegistryFile`: re-read on change, fail closed on an invalid or unsafe file). */
export function openAccountRegistry(
  path: string,
  onError: (message: string) => void,
  recheckMs = 1000,
): AccountRegistry {
  const current = watchRegistryFile(path, readAccounts, onError, recheckMs);
  return {
    authenticate(token) {
      const account = entryForToken(current(), token);
      return account && !account.disabled ? account : undefined;
    },
    find(tenantId, userId) {
      return current().find((a) => !a.disabled && a.tenantId === tenantId && a.userId === userId);
    },
  };
}
