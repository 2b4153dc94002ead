import { generateKeyPairSync, sign } from 'node:crypto';
import { hashToken } from '../../src/auth/tokens.js';
import type { EventData } from '../../src/events/union.js';
import { event, type EnrollmentGrant } from '../../src/setup/events.js';
import { parseEd25519Spki, proofMessage, signedBytes, type Ed25519PublicKey } from '../../src/setup/identity-key.js';
import type { Given } from './decider-spec.js';

/** An Ed25519 signer: its SPKI PEM and a function giving base64 signatures. */
export interface TestKey { readonly pem: string; sign(bytes: Uint8Array): string }
/** A deployment identity: the signer and the parsed public key the authority stores. */
export interface Identity { readonly key: TestKey; readonly pub: Ed25519PublicKey }

/** A fresh Ed25519 deployment identity. */
export function identity(): Identity {
  const pair = generateKeyPairSync('ed25519');
  const key: TestKey = { pem: pair.publicKey.export({ type: 'spki', format: 'pem' }).toString(), sign: (bytes) => sign(null, bytes, pair.privateKey).toString('base64') };
  const pub = parseEd25519Spki(key.pem);
  if (typeof pub === 'string') throw new Error(pub);
  return { key, pub };
}

/** The account of the specs. */
export const ACCOUNT = { tenantId: 't-acme', userId: 'alice' } as const;
/** The approved scope, normalized (sorted): a central VM and two remote collectors. */
export const SCOPE = { central_vm_id: 'vm-central', vms: ['vm-central', 'vm-db', 'vm-web'] };
/** Hashes of the secrets the routes would hold in clear. */
export const HASH = { setup: hashToken('setup-token'), session: hashToken('session-token'), console: hashToken('console-token') } as const;
/** When the setup session of the specs was created, claimed and proven. */
export const T0 = '2026-11-22T10:00:00.000Z';

/** One enrollment grant for a remote VM (its collector id is the VM id). */
export const grant = (vmId: string, expiresAt = '2026-11-23T10:00:00.000Z'): EnrollmentGrant => ({ vmId, collectorId: vmId, tokenHash: hashToken(`enroll-${vmId}`), expiresAt });

/** `SetupSessionCreated` for the account. */
export const sessionCreated = (over: Partial<EventData<'SetupSessionCreated'>> = {}) =>
  event('SetupSessionCreated', { sessionId: 'ses_1', ...ACCOUNT, tokenHash: HASH.setup, expiresAt: '2026-11-22T11:00:00.000Z', ...over });

/** `SetupSessionClaimed` binding `id` and the scope to deployment `dep_1`. */
export const sessionClaimed = (id: Identity, over: Partial<EventData<'SetupSessionClaimed'>> = {}) => event('SetupSessionClaimed', {
  sessionId: 'ses_1', deploymentId: 'dep_1', ...ACCOUNT, publicKeySpkiPem: id.pub.pem, keyFingerprint: id.pub.fingerprint, scope: SCOPE,
  sessionTokenHash: HASH.session, sessionTokenExpiresAt: '2026-11-22T12:00:00.000Z', challenge: 'challenge-1', ...over,
});

/** `SetupSessionProven`: provisioning of `epoch` released with grants for the remote VMs. */
export const sessionProven = (over: Partial<EventData<'SetupSessionProven'>> = {}) => event('SetupSessionProven', {
  sessionId: 'ses_1', deploymentId: 'dep_1', epoch: 1, consoleCredential: { id: 'cc_1', tokenHash: HASH.console, generation: 1 },
  enrollments: [grant('vm-db'), grant('vm-web')], ...over,
});

/** Created and connected (the installer holds the setup token). */
export const connected = (): Given[] => [sessionCreated(), event('SetupSessionConnected', { sessionId: 'ses_1' })];
/** Created, connected and claimed by `id`. */
export const claimed = (id: Identity): Given[] => [...connected(), { ...sessionClaimed(id), at: T0 }];
/** Claimed by `id` and proven: deployment `dep_1` in epoch 1. */
export const provisioned = (id: Identity): Given[] => [...claimed(id), sessionProven()];

/** The payload text and signature of a snapshot of `dep_1` stamped `updatedAt`, signed by `key`. */
export function signedSnapshot(key: TestKey, updatedAt: string, domain: string): { payloadText: string; signature: string } {
  const payloadText = JSON.stringify({ deployment_id: 'dep_1', updated_at: updatedAt, systems_reporting_live: 3 });
  return { payloadText, signature: key.sign(signedBytes(domain, payloadText)) };
}

/** `DeploymentSnapshotReceived` of `dep_1` from `id`, heartbeat `updatedAt`. */
export const snapshotReceived = (id: Identity, updatedAt: string) => ({
  ...event('DeploymentSnapshotReceived', { deploymentId: 'dep_1', keyFingerprint: id.pub.fingerprint, updatedAt, snapshot: { systems_reporting_live: 3 } }),
  at: updatedAt,
});

/** `DeploymentCentralMissing` of `dep_1`, then its recovery token `rcv_1`. */
export const centralMissing = (lastHeartbeatAt: string): Given[] => [
  event('DeploymentCentralMissing', { deploymentId: 'dep_1', lastHeartbeatAt, timeoutSeconds: 900 }),
  event('RecoveryTokenIssued', { deploymentId: 'dep_1', recoveryId: 'rcv_1', tokenHash: hashToken('recovery-token'), ciphertext: 'ciphertext-1', keyId: 'key-1' }),
];

/** `RecoveryClaimed` of `rcv_1` by the new identity `id`: recovery session `ses_2`, epoch 2. */
export const recoveryClaimed = (id: Identity) => event('RecoveryClaimed', {
  deploymentId: 'dep_1', recoveryId: 'rcv_1', sessionId: 'ses_2', ...ACCOUNT, publicKeySpkiPem: id.pub.pem, keyFingerprint: id.pub.fingerprint,
  sessionTokenHash: hashToken('recovery-session-token'), sessionTokenExpiresAt: '2026-11-22T14:00:00.000Z', challenge: 'challenge-2', epoch: 2,
});

/** A possession proof of `id` for a session of `dep_1` and its challenge. */
export const proof = (id: Identity, sessionId = 'ses_1', challenge = 'challenge-1') => id.key.sign(proofMessage(sessionId, 'dep_1', challenge));
