import * as v from 'valibot';

/** A normalized installation scope as stored: the central VM and the approved `vms`, sorted. */
export const StoredScopeSchema = v.strictObject({ central_vm_id: v.string(), vms: v.array(v.string()) });

/** One single-use enrollment token minted for a remote collector (hash only). */
export const EnrollmentGrantSchema = v.strictObject({
  vmId: v.string(),
  collectorId: v.string(),
  tokenHash: v.string(),
  expiresAt: v.string(),
});

/** `BrowserSignedIn`: a browser signed in with its account token; only hashes of the cookie and CSRF token are kept. */
export const BrowserSignedInSchema = v.strictObject({
  browserSessionHash: v.string(),
  csrfHash: v.string(),
  tenantId: v.string(),
  userId: v.string(),
  expiresAt: v.string(),
});

/** `BrowserSignedOut`: a browser signed out. */
export const BrowserSignedOutSchema = v.strictObject({ browserSessionHash: v.string() });

/** `SetupSessionCreated`: a setup session was created for an authenticated account. */
export const SetupSessionCreatedSchema = v.strictObject({
  sessionId: v.string(),
  tenantId: v.string(),
  userId: v.string(),
  tokenHash: v.string(),
  expiresAt: v.string(),
});

/** `SetupSessionConnected`: an installer presented a valid setup token (not consumed). */
export const SetupSessionConnectedSchema = v.strictObject({ sessionId: v.string() });

/** `SetupSessionClaimed`: the first valid claim consumed the setup token and bound identity and scope. */
export const SetupSessionClaimedSchema = v.strictObject({
  sessionId: v.string(),
  deploymentId: v.string(),
  tenantId: v.string(),
  userId: v.string(),
  publicKeySpkiPem: v.string(),
  keyFingerprint: v.string(),
  scope: StoredScopeSchema,
  sessionTokenHash: v.string(),
  sessionTokenExpiresAt: v.string(),
  challenge: v.string(),
});

/** `SetupSessionProven`: the possession proof verified; deployment-scoped provisioning was released. */
export const SetupSessionProvenSchema = v.strictObject({
  sessionId: v.string(),
  deploymentId: v.string(),
  epoch: v.number(),
  consoleCredential: v.strictObject({ id: v.string(), tokenHash: v.string(), generation: v.number() }),
  enrollments: v.array(EnrollmentGrantSchema),
});

/** `BootstrapKeyPublished`: the temporary restricted fleet public key, published for visibility and audit. */
export const BootstrapKeyPublishedSchema = v.strictObject({
  sessionId: v.string(),
  publicKeySpkiPem: v.string(),
  fingerprint: v.string(),
  label: v.optional(v.string()),
});

/** `SetupPhaseReported`: the installer reported progress. */
export const SetupPhaseReportedSchema = v.strictObject({
  sessionId: v.string(),
  phase: v.string(),
  index: v.number(),
  detail: v.optional(v.string()),
});

/** `DeploymentSnapshotReceived`: a signed deployment snapshot arrived; `updatedAt` is the heartbeat. */
export const DeploymentSnapshotReceivedSchema = v.strictObject({
  deploymentId: v.string(),
  keyFingerprint: v.string(),
  updatedAt: v.string(),
  snapshot: v.record(v.string(), v.unknown()),
});

/**
 * `DeploymentCentralMissing`: the recovery monitor found the central VM silent for longer than the heartbeat timeout.
 */
export const DeploymentCentralMissingSchema = v.strictObject({
  deploymentId: v.string(),
  lastHeartbeatAt: v.string(),
  timeoutSeconds: v.number(),
});

/** `RecoveryTokenIssued`: the one recovery token of a central_missing deployment, AES-256-GCM encrypted. */
export const RecoveryTokenIssuedSchema = v.strictObject({
  deploymentId: v.string(),
  recoveryId: v.string(),
  tokenHash: v.string(),
  ciphertext: v.string(),
  keyId: v.string(),
});

/** `RecoveryNoticeSent`: the recovery e-mail went out. */
export const RecoveryNoticeSentSchema = v.strictObject({
  deploymentId: v.string(),
  recoveryId: v.string(),
  to: v.string(),
  messageId: v.string(),
});

/** `RecoveryNoticeFailed`: the recovery e-mail could not be delivered (retried by the monitor). */
export const RecoveryNoticeFailedSchema = v.strictObject({
  deploymentId: v.string(),
  recoveryId: v.string(),
  to: v.string(),
  reason: v.string(),
});

/** `RecoveryTokenRevealed`: the account owner revealed the recovery token in the browser. */
export const RecoveryTokenRevealedSchema = v.strictObject({
  deploymentId: v.string(),
  recoveryId: v.string(),
  tenantId: v.string(),
  userId: v.string(),
});

/** `RecoveryClaimed`: the recovery token was claimed with a new deployment identity: a new (recovery) setup session. */
export const RecoveryClaimedSchema = v.strictObject({
  deploymentId: v.string(),
  recoveryId: v.string(),
  sessionId: v.string(),
  tenantId: v.string(),
  userId: v.string(),
  publicKeySpkiPem: v.string(),
  keyFingerprint: v.string(),
  sessionTokenHash: v.string(),
  sessionTokenExpiresAt: v.string(),
  challenge: v.string(),
  epoch: v.number(),
});

/** `CollectorEnrollmentRedeemed`: the central instance redeemed a collector's enrollment token of the current epoch. */
export const CollectorEnrollmentRedeemedSchema = v.strictObject({
  deploymentId: v.string(),
  epoch: v.number(),
  collectorId: v.string(),
  collectorKeyFingerprint: v.string(),
});

/** `CollectorEnrollmentRefused`: an enrollment was refused (superseded epoch, used or unknown token). */
export const CollectorEnrollmentRefusedSchema = v.strictObject({
  deploymentId: v.string(),
  collectorId: v.string(),
  reason: v.string(),
});

/**
 * `DeploymentAbandoned`: the account owner (browser) or the installer (session token) gave up a deployment that never
 * became live or lost its central VM; it is hidden from the overview and its sessions accept nothing more.
 */
export const DeploymentAbandonedSchema = v.strictObject({
  deploymentId: v.string(),
  tenantId: v.string(),
  /** Who abandoned it: `tenant/user` of a browser, or the setup session id of an installer. */
  principal: v.string(),
  via: v.picklist(['browser', 'installer']),
  reason: v.string(),
  /** The status it had when it was abandoned. */
  from: v.string(),
});

/** The events of the setup authority's own log, by stored type name. */
export const SETUP_EVENTS = {
  BrowserSignedIn: BrowserSignedInSchema,
  BrowserSignedOut: BrowserSignedOutSchema,
  SetupSessionCreated: SetupSessionCreatedSchema,
  SetupSessionConnected: SetupSessionConnectedSchema,
  SetupSessionClaimed: SetupSessionClaimedSchema,
  SetupSessionProven: SetupSessionProvenSchema,
  BootstrapKeyPublished: BootstrapKeyPublishedSchema,
  SetupPhaseReported: SetupPhaseReportedSchema,
  DeploymentSnapshotReceived: DeploymentSnapshotReceivedSchema,
  DeploymentCentralMissing: DeploymentCentralMissingSchema,
  RecoveryTokenIssued: RecoveryTokenIssuedSchema,
  RecoveryNoticeSent: RecoveryNoticeSentSchema,
  RecoveryNoticeFailed: RecoveryNoticeFailedSchema,
  RecoveryTokenRevealed: RecoveryTokenRevealedSchema,
  RecoveryClaimed: RecoveryClaimedSchema,
  CollectorEnrollmentRedeemed: CollectorEnrollmentRedeemedSchema,
  CollectorEnrollmentRefused: CollectorEnrollmentRefusedSchema,
  DeploymentAbandoned: DeploymentAbandonedSchema,
} as const;
