import type * as v from 'valibot';
import type { EnrollmentGrantSchema } from '../events/setup-events.js';
import { eventOf, type AuthorityEventType, type EventData, type EventOf } from '../events/union.js';

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
  DeploymentAbandoned: 'DeploymentAbandoned',
} as const satisfies { readonly [K in AuthorityEventType]: K };

/** One single-use enrollment token minted for a remote collector (hash only). */
export type EnrollmentGrant = v.InferOutput<typeof EnrollmentGrantSchema>;
/** The possession proof verified; deployment-scoped provisioning was released. */
export type SetupSessionProven = EventData<'SetupSessionProven'>;

/** Builds a domain event of the authority; its data is checked against the type's schema at compile time. */
export function event<K extends AuthorityEventType>(type: K, data: EventData<K>): EventOf<K> {
  return eventOf(type, data);
}
