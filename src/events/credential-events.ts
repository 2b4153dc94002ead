import * as v from 'valibot';
import { NormalizedEventSchema } from './normalized-event.js';

/** What happened to a credential of the registry file, as the service saw it on reloading the file. */
export const CREDENTIAL_CHANGES = ['added', 'removed', 'disabled', 'enabled', 'changed'] as const;

/** One credential as the log remembers it: never the token or its hash, only the fingerprint. */
export const CredentialChangeSchema = v.strictObject({
  change: v.picklist(CREDENTIAL_CHANGES),
  id: v.string(),
  /** The first 12 hex digits of the token's SHA-256: what `vigil credential ... --fingerprint` takes. */
  fingerprint: v.string(),
  roles: v.array(v.string()),
  disabled: v.boolean(),
  expiresAt: v.optional(v.string()),
  collectorId: v.optional(v.string()),
  /** When `vigil api-token-generate` created it (absent for credentials written before it said so). */
  createdAt: v.optional(v.string()),
});

/**
 * `CredentialsChanged`: the credential registry file changed (a credential created, disabled,
 * enabled, edited or removed by `vigil api-token-generate` / `vigil credential`, or by hand). The
 * service records it when it (re)loads the file, so the log stays the one writer's; each change
 * also carries a detectable NormalizedEvent (category configuration, class credential_change).
 */
export const CredentialsChangedSchema = v.strictObject({
  changes: v.array(CredentialChangeSchema),
  events: v.array(NormalizedEventSchema),
});

/** The credential events of the instance, by stored type name. */
export const CREDENTIAL_EVENTS = {
  CredentialsChanged: CredentialsChangedSchema,
} as const;
