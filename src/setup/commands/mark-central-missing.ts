import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import type { DeploymentView } from '../projections/deployments.js';
import { openRecovery } from '../projections/recovery.js';

/** Whether a deployment's heartbeat is older than the timeout at `now` (only reporting deployments are watched). */
export function isOverdue(d: DeploymentView, now: string, timeoutSeconds: number): boolean {
  return (
    d.status === 'reporting' &&
    d.lastHeartbeatAt !== undefined &&
    Date.parse(d.lastHeartbeatAt) + timeoutSeconds * 1000 < Date.parse(now)
  );
}

/** The monitor's command: a freshly minted, already encrypted recovery token for one deployment. */
export interface MarkMissingCommand {
  readonly deploymentId: string;
  readonly now: string;
  readonly timeoutSeconds: number;
  readonly recovery: { recoveryId: string; tokenHash: string; ciphertext: string; keyId: string };
}

/**
 * Marks an overdue deployment `central_missing` and issues its one recovery token. Deciding
 * against current state makes it exactly one: a deployment already missing is a conflict, and a
 * deployment that still holds an unclaimed token (its central came back, then left again) gets no second one.
 */
export function decideCentralMissing(models: AuthorityModels, cmd: MarkMissingCommand): Decision<{ issued: boolean }> {
  const d = models.deployments.byId[cmd.deploymentId];
  if (!d || !isOverdue(d, cmd.now, cmd.timeoutSeconds)) return reject('conflict', 'the deployment is not overdue');
  const missing = event('DeploymentCentralMissing', {
    deploymentId: d.id,
    lastHeartbeatAt: d.lastHeartbeatAt!,
    timeoutSeconds: cmd.timeoutSeconds,
  });
  if (openRecovery(models.recovery, d.recoveryIds)) return accept([missing], { issued: false });
  return accept([missing, event('RecoveryTokenIssued', { deploymentId: d.id, ...cmd.recovery })], { issued: true });
}
