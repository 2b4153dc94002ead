import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event, type EnrollmentGrant } from '../events.js';
import { parseEd25519Spki, proofMessage, verifyStrict } from '../identity-key.js';
import type { DeploymentView } from '../projections/deployments.js';
import type { SessionView } from '../projections/setup-sessions.js';
import { authorizeSession, isDecision } from './session-auth.js';

/** A proof and the provisioning the route minted for it (plaintext stays in the route; hashes go here). */
export interface ProveCommand {
  readonly sessionId: string;
  readonly sessionTokenHash: string;
  readonly signature: string;
  readonly now: string;
  readonly consoleCredential: { id: string; tokenHash: string };
  readonly enrollments: readonly EnrollmentGrant[];
}

/** The VMs that get a collector enrollment token: every VM in scope except the central one. */
export function remoteVms(d: DeploymentView): string[] {
  return d.scope.vms.filter((id) => id !== d.scope.central_vm_id);
}

/** The claimed session and its deployment for a session token, or a rejection. */
export function sessionAndDeployment(
  models: AuthorityModels,
  sessionId: string,
  tokenHash: string,
  now: string,
): { view: SessionView; d: DeploymentView } | Decision<never> {
  const view = authorizeSession(models, sessionId, tokenHash, now);
  if (isDecision(view)) return view;
  const d = view.deploymentId === undefined ? undefined : models.deployments.byId[view.deploymentId];
  if (!d || d.sessionId !== view.id) return reject('conflict', 'this session no longer controls its deployment');
  if (d.status === 'abandoned') return reject('conflict', `deployment ${d.id} was abandoned`);
  return { view, d };
}

/** `prove`: verifies the Ed25519 possession proof, then releases deployment-scoped provisioning once. */
export function decideProve(
  models: AuthorityModels,
  cmd: ProveCommand,
): Decision<{ deploymentId: string; epoch: number; generation: number }> {
  const found = sessionAndDeployment(models, cmd.sessionId, cmd.sessionTokenHash, cmd.now);
  if ('ok' in found) return found;
  const { view, d } = found;
  if (view.status !== 'claimed')
    return reject('conflict', `the session is ${view.status}; provisioning is released once`);
  const key = parseEd25519Spki(d.publicKeySpkiPem);
  if (
    typeof key === 'string' ||
    !view.challenge ||
    !verifyStrict(cmd.signature, proofMessage(view.id, d.id, view.challenge), key.raw)
  ) {
    return reject('unauthenticated', 'the possession proof does not verify');
  }
  const expected = remoteVms(d).join('\n');
  if (cmd.enrollments.map((g) => g.vmId).join('\n') !== expected)
    return reject('conflict', 'provisioning does not match the scope; retry');
  const epoch = view.kind === 'setup' ? 1 : d.epoch;
  const generation = (d.consoleCredential?.generation ?? 0) + 1;
  return accept(
    [
      event('SetupSessionProven', {
        sessionId: view.id,
        deploymentId: d.id,
        epoch,
        consoleCredential: { ...cmd.consoleCredential, generation },
        enrollments: [...cmd.enrollments],
      }),
    ],
    { deploymentId: d.id, epoch, generation },
  );
}
