import * as v from 'valibot';
import type { MeshAllowlistEntry } from './mesh-allowlist.js';
import type { Principal } from './registry.js';

/** The login name of the profile Tailscale shares between every tagged node of a tailnet. */
export const TAGGED_DEVICES = 'tagged-devices';

const Text = v.pipe(v.string(), v.maxLength(1024));

/**
 * The fields of a LocalAPI whois answer (`apitype.WhoIsResponse`) that identify the peer; the
 * rest is ignored. A user id that a JavaScript number cannot hold exactly is refused, so no
 * rounding can turn one user into another.
 */
export const WhoIsSchema = v.object({
  Node: v.object({
    StableID: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
    Tags: v.optional(v.nullable(v.pipe(v.array(Text), v.maxLength(1024)))),
  }),
  UserProfile: v.object({
    ID: v.pipe(v.number(), v.safeInteger(), v.minValue(0)),
    LoginName: Text,
    DisplayName: v.optional(Text, ''),
  }),
});

/** The identifying part of a whois answer. */
export type WhoIs = v.InferOutput<typeof WhoIsSchema>;

/** Parses the body of a whois answer; undefined when it is not JSON or lacks what identifies the peer. */
export function parseWhoIs(body: string): WhoIs | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  const parsed = v.safeParse(WhoIsSchema, json);
  return parsed.success ? parsed.output : undefined;
}

/** Whether the answer is a tagged node: its identity is the node, never the shared profile. */
export function isTagged(who: WhoIs): boolean {
  return (who.Node.Tags?.length ?? 0) > 0 || who.UserProfile.LoginName === TAGGED_DEVICES;
}

/**
 * The principal of a whois answer under the allowlist, or undefined when no entry names it. A
 * user-owned node matches a `user` entry by `UserProfile.ID` (the principal is the user) or else a
 * `node` entry by `Node.StableID`; a tagged node matches only a `node` entry.
 */
export function meshPrincipal(who: WhoIs, allowlist: readonly MeshAllowlistEntry[]): Principal | undefined {
  const userId = String(who.UserProfile.ID);
  const byUser = isTagged(who) ? undefined : allowlist.find((e) => e.user === userId);
  const byNode = byUser ? undefined : allowlist.find((e) => e.node === who.Node.StableID);
  const entry = byUser ?? byNode;
  if (!entry) return undefined;
  return {
    id: byUser ? `mesh:user:${userId}` : `mesh:node:${who.Node.StableID}`,
    roles: [...entry.roles],
    loginName: who.UserProfile.LoginName,
    displayName: who.UserProfile.DisplayName,
    authentication: 'mesh',
  };
}
