import type { DomainEvent } from '../commands/decision.js';
import type { InstallationScope } from './scope.js';

/** The record types of the setup authority's log; a written type is never reshaped. */
export const SetupRecordType = {
  BrowserSignedIn: 'BrowserSignedIn',
  BrowserSignedOut: 'BrowserSignedOut',
  SetupSessionCreated: 'SetupSessionCreated',
  SetupSessionConnected: 'SetupSessionConnected',
  SetupSessionClaimed: 'SetupSessionClaimed',
  SetupSessionProven: 'SetupSessionProven',
  BootstrapKeyPublished: 'BootstrapKeyPublished',
  SetupPhaseReported: 'SetupPhaseReported',
  DeploymentSnapshotReceived: 'DeploymentSnapshotReceived',
  DeploymentCentralMissing: 'DeploymentCentralMissing',
  RecoveryTokenIssued: 'RecoveryTokenIssued',
  RecoveryNoticeSent: 'RecoveryNoticeSent',
  RecoveryNoticeFailed: 'RecoveryNoticeFailed',
  RecoveryTokenRevealed: 'RecoveryTokenRevealed',
  RecoveryClaimed: 'RecoveryClaimed',
  CollectorEnrollmentRedeemed: 'CollectorEnrollmentRedeemed',
  CollectorEnrollmentRefused: 'CollectorEnrollmentRefused',
} as const;

/** A browser signed in with its account token; only hashes of the cookie and CSRF token are kept. */
export interface BrowserSignedIn { browserSessionHash: string; csrfHash: string; tenantId: string; userId: string; expiresAt: string }
/** A browser signed out. */
export interface BrowserSignedOut { browserSessionHash: string }
/** A setup session was created for an authenticated account. */
export interface SetupSessionCreated { sessionId: string; tenantId: string; userId: string; tokenHash: string; expiresAt: string }
/** An installer presented a valid setup token (not consumed). */
export interface SetupSessionConnected { sessionId: string }
/** The first valid claim consumed the setup token and bound identity and scope. */
export interface SetupSessionClaimed {
  sessionId: string; deploymentId: string; tenantId: string; userId: string; publicKeySpkiPem: string; keyFingerprint: string;
  scope: InstallationScope; sessionTokenHash: string; sessionTokenExpiresAt: string; challenge: string;
}
/** One single-use enrollment token minted for a remote collector (hash only). */
export interface EnrollmentGrant { vmId: string; collectorId: string; tokenHash: string; expiresAt: string }
/** The possession proof verified; deployment-scoped provisioning was released. */
export interface SetupSessionProven {
  sessionId: string; deploymentId: string; epoch: number;
  consoleCredential: { id: string; tokenHash: string; generation: number };
  enrollments: EnrollmentGrant[];
}
/** The temporary restricted fleet public key, published for visibility and audit. */
export interface BootstrapKeyPublished { sessionId: string; publicKeySpkiPem: string; fingerprint: string; label?: string }
/** The installer reported progress. */
export interface SetupPhaseReported { sessionId: string; phase: string; index: number; detail?: string }
/** A signed deployment snapshot arrived; `updatedAt` is the heartbeat. */
export interface DeploymentSnapshotReceived { deploymentId: string; keyFingerprint: string; updatedAt: string; snapshot: Record<string, unknown> }
/** The recovery monitor found the central VM silent for longer than the heartbeat timeout. */
export interface DeploymentCentralMissing { deploymentId: string; lastHeartbeatAt: string; timeoutSeconds: number }
/** The one recovery token of a central_missing deployment, AES-256-GCM encrypted. */
export interface RecoveryTokenIssued { deploymentId: string; recoveryId: string; tokenHash: string; ciphertext: string; keyId: string }
/** The recovery e-mail went out. */
export interface RecoveryNoticeSent { deploymentId: string; recoveryId: string; to: string; messageId: string }
/** The recovery e-mail could not be delivered (retried by the monitor). */
export interface RecoveryNoticeFailed { deploymentId: string; recoveryId: string; to: string; reason: string }
/** The account owner revealed the recovery token in the browser. */
export interface RecoveryTokenRevealed { deploymentId: string; recoveryId: string; tenantId: string; userId: string }
/** The recovery token was claimed with a new deployment identity: a new (recovery) setup session. */
export interface RecoveryClaimed {
  deploymentId: string; recoveryId: string; sessionId: string; tenantId: string; userId: string;
  publicKeySpkiPem: string; keyFingerprint: string; sessionTokenHash: string; sessionTokenExpiresAt: string;
  challenge: string; epoch: number;
}
/** The central instance redeemed a collector's enrollment token of the current epoch. */
export interface CollectorEnrollmentRedeemed { deploymentId: string; epoch: number; collectorId: string; collectorKeyFingerprint: string }
/** An enrollment was refused (superseded epoch, used or unknown token). */
export interface CollectorEnrollmentRefused { deploymentId: string; collectorId: string; reason: string }

/** Builds a domain event of the authority. */
export function event<D>(type: keyof typeof SetupRecordType, data: D): DomainEvent<string, D> {
  return { type: SetupRecordType[type], data };
}
