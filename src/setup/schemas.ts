import * as v from 'valibot';
import { IsoDateTime } from '../events/normalized-event.js';
import { InstallationScopeSchema, VmId } from './scope.js';

const Secret = (prefix: string) =>
  v.pipe(
    v.string(),
    v.maxLength(128),
    v.regex(new RegExp(`^${prefix}[A-Za-z0-9_-]{43}$`), `expected a ${prefix}... token`),
  );
const Pem = v.pipe(v.string(), v.minLength(1), v.maxLength(1024));

/** Prefixes of the authority's bearer secrets (256 bits each, base64url). */
export const PREFIX = {
  setup: 'lst_',
  session: 'lss_',
  enrollment: 'lce_',
  browser: 'lsb_',
  csrf: 'lsx_',
  recovery: 'lrc_',
} as const;

/** `POST /v1/browser-sessions`: the account token, presented once. */
export const SignInBody = v.strictObject({
  token: v.pipe(v.string(), v.maxLength(128), v.regex(/^lsa_[A-Za-z0-9_-]{43}$/, 'expected an lsa_... account token')),
});

/** `POST /v1/setup-sessions`: exactly `{}`; tenant and user come from the signed-in account. */
export const CreateSessionBody = v.strictObject({});

/** `POST /v1/setup-sessions/connect`. */
export const ConnectBody = v.strictObject({ setup_token: Secret(PREFIX.setup) });

/** `deployment_identity`: the Ed25519 public key of the new deployment. */
export const DeploymentIdentity = v.strictObject({ public_key_spki_pem: Pem });

/** `POST /v1/setup-sessions/claim`. */
export const ClaimBody = v.strictObject({
  setup_token: Secret(PREFIX.setup),
  deployment_identity: DeploymentIdentity,
  installation_scope: InstallationScopeSchema,
});

/** `POST /v1/setup-sessions/{id}/prove`: standard base64 of the 64-byte Ed25519 signature. */
export const ProveBody = v.strictObject({ signature: v.pipe(v.string(), v.maxLength(128)) });

/** `POST /v1/setup-sessions/{id}/bootstrap-key`. */
export const BootstrapKeyBody = v.strictObject({
  public_key: v.pipe(v.string(), v.minLength(1), v.maxLength(1024)),
  label: v.optional(v.pipe(v.string(), v.maxLength(128), v.regex(/^[\x20-\x7e]*$/, 'expected printable ASCII'))),
});

/** `POST /v1/setup-sessions/{id}/phases`. */
export const PhaseBody = v.strictObject({
  phase: v.pipe(v.string(), v.maxLength(64)),
  detail: v.optional(v.pipe(v.string(), v.maxLength(512))),
});

/** `POST /v1/recovery/claim`: the recovery token, a new identity key and optionally a (narrower) scope. */
export const RecoveryClaimBody = v.strictObject({
  recovery_token: Secret(PREFIX.recovery),
  deployment_identity: DeploymentIdentity,
  installation_scope: v.optional(InstallationScopeSchema),
});

/** A signed request of a deployment's central instance: the JSON payload as text, and its signature. */
export const SignedEnvelope = v.strictObject({
  payload: v.pipe(v.string(), v.minLength(2), v.maxLength(200_000)),
  signature: v.pipe(v.string(), v.maxLength(128)),
});

/** One system a snapshot lists. */
export const SnapshotSystem = v.strictObject({
  id: v.pipe(v.string(), v.minLength(1), v.maxLength(256)),
  kind: v.picklist(['central', 'collector', 'source']),
  live: v.boolean(),
  last_seen_at: v.optional(IsoDateTime),
});

/** One collector the central instance knows (snapshot `collectors`, optional: older instances send none). */
export const SnapshotCollector = v.strictObject({
  collector_id: VmId,
  vm_id: v.optional(VmId),
  enrollment_epoch: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  enrolled_at: IsoDateTime,
  last_evidence_at: v.nullable(IsoDateTime),
  silent: v.boolean(),
});

/** The deployment snapshot payload (signed); `updated_at` is the heartbeat. */
export const SnapshotPayload = v.strictObject({
  deployment_id: v.pipe(v.string(), v.maxLength(64)),
  updated_at: IsoDateTime,
  central_vm_id: v.optional(VmId),
  instance_url: v.optional(
    v.pipe(v.string(), v.maxLength(2048), v.url(), v.regex(/^https?:\/\//, 'expected an http(s) URL')),
  ),
  enrollment_epoch: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  systems_reporting_live: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(1_000_000)),
  systems: v.optional(v.pipe(v.array(SnapshotSystem), v.maxLength(1024))),
  collectors: v.optional(v.pipe(v.array(SnapshotCollector), v.maxLength(1000))),
  collectors_omitted: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  log_head: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
  version: v.optional(v.pipe(v.string(), v.maxLength(64))),
});

/** The collector-enrollment redemption payload (signed by the central instance). */
export const RedeemPayload = v.strictObject({
  deployment_id: v.pipe(v.string(), v.maxLength(64)),
  collector_id: VmId,
  enrollment_token: Secret(PREFIX.enrollment),
  collector_public_key_spki_pem: Pem,
});

/** The enrollment check payload (signed by the central instance). */
export const VerifyEnrollmentPayload = v.strictObject({
  deployment_id: v.pipe(v.string(), v.maxLength(64)),
  collector_id: VmId,
  collector_key_fingerprint: v.pipe(
    v.string(),
    v.regex(/^[0-9a-f]{64}$/, 'expected the SHA-256 hex of the collector key SPKI DER'),
  ),
  enrollment_epoch: v.pipe(v.number(), v.integer(), v.minValue(1)),
});
