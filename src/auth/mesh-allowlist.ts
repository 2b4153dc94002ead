import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { issueLines } from './registry.js';
import { watchRegistryFile } from './registry-file.js';

/** The roles a mesh identity may hold (spec 5.1 #8): interactive people and devices, never ingest or collector. */
export const MESH_ROLES = ['viewer', 'analyst', 'rule_admin', 'admin'] as const;

const MeshRoles = v.pipe(
  v.array(v.picklist(MESH_ROLES, `expected one of ${MESH_ROLES.join(', ')}`)),
  v.minLength(1, 'expected at least one role'),
  v.maxLength(MESH_ROLES.length),
);

/** A stable user id as `tailscale whois` prints it: the decimal `UserProfile.ID`, quoted so no digit is lost. */
const StableUserId = v.pipe(
  v.string(),
  v.regex(/^[1-9][0-9]{0,15}$/, 'expected a user ID as `tailscale whois` prints it (decimal digits, quoted)'),
  v.check((s) => Number.isSafeInteger(Number(s)), 'expected a user ID below 2^53'),
);

/** A stable node id as `tailscale whois` prints it (`Node.StableID`, e.g. `nDbSrv01CNTRL`). */
const StableNodeId = v.pipe(
  v.string(),
  v.regex(/^[A-Za-z0-9_-]{1,128}$/, 'expected a stable node ID as `tailscale whois` prints it, e.g. nDbSrv01CNTRL'),
);

/** One allowlist entry: exactly one of a stable user id or a stable node id, and its roles. */
export const MeshAllowlistEntrySchema = v.pipe(
  v.strictObject({ user: v.optional(StableUserId), node: v.optional(StableNodeId), roles: MeshRoles }),
  v.check((e) => (e.user === undefined) !== (e.node === undefined), 'expected exactly one of user or node'),
);

/** The allowlist: who on the tailnet may use the API, by stable id. */
export const MeshAllowlistSchema = v.pipe(v.array(MeshAllowlistEntrySchema), v.maxLength(10_000));

/** The owner-only allowlist file (`auth.mesh.allowlistFile`): `{allowlist: [...]}`. */
export const MeshAllowlistFileSchema = v.strictObject({ allowlist: MeshAllowlistSchema });

/** One validated allowlist entry. */
export type MeshAllowlistEntry = v.InferOutput<typeof MeshAllowlistEntrySchema>;

/** Reads and validates an allowlist file; a missing file is an empty list. Throws naming the key. */
export function readMeshAllowlist(path: string): MeshAllowlistEntry[] {
  if (!existsSync(path)) return [];
  const parsed = v.safeParse(MeshAllowlistFileSchema, JSON.parse(readFileSync(path, 'utf8')));
  if (!parsed.success) throw new Error(`mesh allowlist ${path} is invalid: ${issueLines(parsed.issues).join('; ')}`);
  return parsed.output.allowlist;
}

/**
 * The live allowlist: the config's inline entries plus those of `file`, re-read when it changes.
 * While the file is invalid or readable by others the whole allowlist is undefined, so every mesh
 * identity is refused (fail closed) until it is fixed; `onError` says why.
 */
export function openMeshAllowlist(
  inline: readonly MeshAllowlistEntry[],
  file: string | undefined,
  onError: (message: string) => void,
  recheckMs = 500,
): () => readonly MeshAllowlistEntry[] | undefined {
  if (file === undefined) return () => inline;
  let broken = false;
  const current = watchRegistryFile(
    file,
    (path) => {
      const entries = readMeshAllowlist(path);
      broken = false;
      return entries;
    },
    (message) => {
      broken = true;
      onError(
        message.replace(
          /^registry (.*?) not loaded, refusing every token/,
          'mesh allowlist $1 not loaded, refusing every mesh identity',
        ),
      );
    },
    recheckMs,
  );
  return () => {
    const entries = current();
    return broken ? undefined : [...inline, ...entries];
  };
}
