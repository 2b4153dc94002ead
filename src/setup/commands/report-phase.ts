import { accept, reject, type Decision } from '../../commands/decision.js';
import type { AuthorityModels } from '../models.js';
import { event } from '../events.js';
import { PHASES, phaseIndex } from '../phases.js';
import { currentPhase } from '../projections/setup-sessions.js';
import { sessionAndDeployment } from './prove-session.js';

/** A phase report from the installer. */
export interface PhaseCommand {
  readonly sessionId: string;
  readonly sessionTokenHash: string;
  readonly now: string;
  readonly phase: string;
  readonly detail?: string;
}

/** What a phase report answers: the current phase and whether this report changed anything. */
export interface PhaseResult {
  readonly phase: string;
  readonly index: number;
  readonly recorded: boolean;
}

/**
 * `phases`: progress is monotonic (repeat = idempotent, back = 409); `completed` is refused (409)
 * until the deployment's first snapshot since this session's claim has arrived.
 */
export function decidePhase(models: AuthorityModels, cmd: PhaseCommand): Decision<PhaseResult> {
  const found = sessionAndDeployment(models, cmd.sessionId, cmd.sessionTokenHash, cmd.now);
  if ('ok' in found) return found;
  const { view, d } = found;
  const index = phaseIndex(cmd.phase);
  if (index < 0)
    return reject('invalid', `unknown phase ${cmd.phase}`, { issues: [`phase: expected one of ${PHASES.join(', ')}`] });
  if (view.status === 'created' || view.status === 'connected' || view.status === 'claimed')
    return reject('conflict', 'phases are reported after the possession proof');
  const current = currentPhase(view);
  if (current && index === current.index) return accept([], { phase: current.phase, index, recorded: false });
  if (view.status === 'completed') return reject('conflict', 'the session is already completed');
  if (current && index < current.index) {
    return reject('conflict', `phase ${cmd.phase} would move progress back from ${current.phase}`, {
      details: { current_phase: current.phase },
    });
  }
  if (cmd.phase === 'completed' && (d.lastSnapshotSeq === undefined || d.lastSnapshotSeq < (view.claimSeq ?? 0))) {
    return reject('conflict', 'completion needs the first deployment snapshot; none has been received yet');
  }
  return accept(
    [
      event('SetupPhaseReported', {
        sessionId: view.id,
        phase: cmd.phase,
        index,
        ...(cmd.detail ? { detail: cmd.detail } : {}),
      }),
    ],
    { phase: cmd.phase, index, recorded: true },
  );
}
