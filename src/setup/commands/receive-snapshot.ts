import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import { SNAPSHOT_DOMAIN, parseEd25519Spki, signedBytes, verifyStrict } from '../identity-key.js';
import type { DeploymentView } from '../projections/deployments.js';

/** Snapshots may be stamped at most this far ahead of the authority's clock. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

/** A signed request from a deployment's central instance: the payload text and its signature. */
export interface SignedDeploymentRequest {
  readonly deploymentId: string;
  readonly payloadText: string;
  readonly signature: string;
}

/** The deployment whose current identity key signed `payloadText` under `domain`, or a 401 rejection. */
export function verifyDeploymentSignature(
  models: AuthorityModels,
  req: SignedDeploymentRequest,
  domain: string,
): DeploymentView | Decision<never> {
  const d = models.deployments.byId[req.deploymentId];
  const refused = reject('unauthenticated', 'unknown deployment, retired identity key or bad signature');
  if (!d) return refused;
  const key = parseEd25519Spki(d.publicKeySpkiPem);
  if (typeof key === 'string' || !verifyStrict(req.signature, signedBytes(domain, req.payloadText), key.raw))
    return refused;
  return d;
}

/** A snapshot whose payload the route has parsed and validated. */
export interface SnapshotCommand extends SignedDeploymentRequest {
  readonly now: string;
  readonly updatedAt: string;
  readonly snapshot: Record<string, unknown>;
}

/**
 * Accepts a signed snapshot from the deployment's current identity key. `updated_at` (the
 * heartbeat) must move forward and may not be ahead of the authority's clock by more than 5 minutes.
 */
export function decideSnapshot(
  models: AuthorityModels,
  cmd: SnapshotCommand,
): Decision<{ status: string; epoch: number }> {
  const d = verifyDeploymentSignature(models, cmd, SNAPSHOT_DOMAIN);
  if ('ok' in d) return d;
  if (d.epoch === 0) return reject('conflict', 'provisioning has not been released for this deployment yet');
  if (Date.parse(cmd.updatedAt) > Date.parse(cmd.now) + MAX_CLOCK_SKEW_MS)
    return reject('invalid', 'updated_at is ahead of the authority clock by more than 5 minutes');
  if (d.lastHeartbeatAt !== undefined && Date.parse(cmd.updatedAt) <= Date.parse(d.lastHeartbeatAt)) {
    return reject('conflict', 'updated_at must be later than the last snapshot (replay or stale snapshot)', {
      details: { last_updated_at: d.lastHeartbeatAt },
    });
  }
  return accept(
    [
      event('DeploymentSnapshotReceived', {
        deploymentId: d.id,
        keyFingerprint: d.keyFingerprint,
        updatedAt: cmd.updatedAt,
        snapshot: cmd.snapshot,
      }),
    ],
    { status: 'reporting', epoch: d.epoch },
  );
}
