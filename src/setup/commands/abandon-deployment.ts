import * as v from 'valibot';
import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import type { DeploymentView } from '../projections/deployments.js';
import { authorizeSession, isDecision } from './session-auth.js';

/** The body of both abandon routes: why, in one line a person writes. */
export const AbandonBody = v.strictObject({
  reason: v.pipe(v.string(), v.trim(), v.minLength(1, 'say why'), v.maxLength(500), v.regex(/^[^\n\r]*$/, 'one line')),
});

/** Why a deployment is abandoned: one line a person wrote (bounded by `AbandonBody`). */
export interface AbandonReason {
  readonly reason: string;
}

/** The browser's abandon: the signed-in account names one of its tenant's deployments. */
export interface BrowserAbandon extends AbandonReason {
  readonly tenantId: string;
  readonly userId: string;
  readonly deploymentId: string;
}

/** The installer's abandon: the session token of the session that controls the deployment. */
export interface InstallerAbandon extends AbandonReason {
  readonly sessionId: string;
  readonly sessionTokenHash: string;
  readonly now: string;
}

/**
 * The abandon rule shared by both ways in: a deployment whose central instance reports is live and is not abandoned
 * (there is nothing stuck to give up); one already abandoned is a conflict.
 */
function abandon(d: DeploymentView, principal: string, via: 'browser' | 'installer', reason: string) {
  if (d.status === 'abandoned') return reject('conflict', `deployment ${d.id} is already abandoned`);
  if (d.status === 'reporting')
    return reject('conflict', `deployment ${d.id} is live (its central instance reports): it cannot be abandoned`);
  return accept(
    [
      event('DeploymentAbandoned', {
        deploymentId: d.id,
        tenantId: d.tenantId,
        principal,
        via,
        reason,
        from: d.status,
      }),
    ],
    { deploymentId: d.id, from: d.status },
  );
}

/** What an abandon answers. */
export interface AbandonResult {
  readonly deploymentId: string;
  readonly from: string;
}

/** Abandons one of the browser tenant's deployments (another tenant's is a 404). */
export function decideAbandonByBrowser(models: AuthorityModels, cmd: BrowserAbandon): Decision<AbandonResult> {
  const d = models.deployments.byId[cmd.deploymentId];
  if (!d || d.tenantId !== cmd.tenantId) return reject('not_found', `no deployment ${cmd.deploymentId}`);
  return abandon(d, `${cmd.tenantId}/${cmd.userId}`, 'browser', cmd.reason);
}

/** Abandons the deployment the installer's session controls (its session token, as every installer call). */
export function decideAbandonByInstaller(models: AuthorityModels, cmd: InstallerAbandon): Decision<AbandonResult> {
  const view = authorizeSession(models, cmd.sessionId, cmd.sessionTokenHash, cmd.now);
  if (isDecision(view)) return view;
  const d = view.deploymentId === undefined ? undefined : models.deployments.byId[view.deploymentId];
  if (!d || d.sessionId !== view.id) return reject('conflict', 'this session no longer controls its deployment');
  return abandon(d, view.id, 'installer', cmd.reason);
}
