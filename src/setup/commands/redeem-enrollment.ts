import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { digestsEqual } from '../../auth/tokens.js';
import { event } from '../events.js';
import { ENROLLMENT_DOMAIN } from '../identity-key.js';
import { verifyDeploymentSignature, type SignedDeploymentRequest } from './receive-snapshot.js';

/** A redemption relayed by the central instance: the collector, its token (hashed by the route) and key. */
export interface RedeemCommand extends SignedDeploymentRequest {
  readonly now: string;
  readonly collectorId: string;
  readonly tokenHash: string;
  readonly collectorKeyFingerprint: string;
}

/**
 * Redeems a single-use collector enrollment token of the deployment's current epoch. A token of an
 * earlier epoch, a used, expired or unknown one is refused (401) and the refusal is recorded.
 */
export function decideRedeem(
  models: AuthorityModels,
  cmd: RedeemCommand,
): Decision<{ collectorId: string; epoch: number }> {
  const d = verifyDeploymentSignature(models, cmd, ENROLLMENT_DOMAIN);
  if ('ok' in d) return d;
  const grant = d.enrollments[cmd.collectorId];
  const refuse = (reason: string) =>
    reject('unauthenticated', `enrollment refused: ${reason}`, {
      events: [event('CollectorEnrollmentRefused', { deploymentId: d.id, collectorId: cmd.collectorId, reason })],
    });
  if (!grant || !digestsEqual(grant.tokenHash, cmd.tokenHash)) return refuse('unknown_or_superseded_token');
  if (grant.redeemed) return refuse('token_already_used');
  if (grant.expiresAt <= cmd.now) return refuse('token_expired');
  return accept(
    [
      event('CollectorEnrollmentRedeemed', {
        deploymentId: d.id,
        epoch: d.epoch,
        collectorId: cmd.collectorId,
        collectorKeyFingerprint: cmd.collectorKeyFingerprint,
      }),
    ],
    { collectorId: cmd.collectorId, epoch: d.epoch },
  );
}

/** Whether a collector enrollment (its key fingerprint and epoch) is still honoured by the deployment. */
export function enrollmentValid(
  models: AuthorityModels,
  req: SignedDeploymentRequest,
  collectorId: string,
  keyFingerprint: string,
  epoch: number,
): Decision<{ valid: boolean; currentEpoch: number }> {
  const d = verifyDeploymentSignature(models, req, ENROLLMENT_DOMAIN);
  if ('ok' in d) return d;
  const redeemed = d.enrollments[collectorId]?.redeemed;
  const valid = epoch === d.epoch && redeemed !== undefined && redeemed.keyFingerprint === keyFingerprint;
  return accept([], { valid, currentEpoch: d.epoch });
}
