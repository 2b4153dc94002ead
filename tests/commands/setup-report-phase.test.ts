import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decidePhase, type PhaseCommand } from '../../src/setup/commands/report-phase.js';
import { event } from '../../src/setup/events.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { HASH, claimed, identity, provisioned, snapshotReceived } from '../helpers/setup-fixtures.js';

const id = identity();
const phase = spec(decidePhase, AUTHORITY);
const cmd = (name: string, detail?: string): PhaseCommand => ({ sessionId: 'ses_1', sessionTokenHash: HASH.session, now: '2026-11-22T10:30:00.000Z', phase: name, ...(detail ? { detail } : {}) });
const reported = (name: string, index: number) => event('SetupPhaseReported', { sessionId: 'ses_1', phase: name, index });

describe('decidePhase', () => {
  it('records progress to a later phase, with its index and detail', () => {
    phase.given(provisioned(id)).when(cmd('central_install_started', 'apt'))
      .then([event('SetupPhaseReported', { sessionId: 'ses_1', phase: 'central_install_started', index: 1, detail: 'apt' })], { phase: 'central_install_started', index: 1, recorded: true });
  });

  it('answers a repeat of the current phase without recording it again', () => {
    phase.given([...provisioned(id), reported('central_install_started', 1)]).when(cmd('central_install_started'))
      .then([], { phase: 'central_install_started', index: 1, recorded: false });
  });

  it('refuses moving progress back, even by one phase, naming the current phase', () => {
    const r = phase.given([...provisioned(id), reported('collectors_provisioned', 3)]).when(cmd('central_instance_configured')).thenRejects('conflict', /would move progress back from collectors_provisioned/);
    assert.deepEqual(r.details, { current_phase: 'collectors_provisioned' });
  });

  it('refuses a phase it does not know, listing the known ones', () => {
    const r = phase.given(provisioned(id)).when(cmd('central_installing')).thenRejects('invalid', /unknown phase central_installing/);
    assert.match(r.issues?.[0] ?? '', /^phase: expected one of discovery_completed, .*, completed$/);
  });

  it('refuses phases before the possession proof', () => {
    phase.given(claimed(id)).when(cmd('discovery_completed')).thenRejects('conflict', /after the possession proof/);
  });

  it('refuses completion until a snapshot arrived after the claim', () => {
    phase.given(provisioned(id)).when(cmd('completed')).thenRejects('conflict', /completion needs the first deployment snapshot/);
  });

  it('records completion once the deployment reported', () => {
    phase.given([...provisioned(id), snapshotReceived(id, '2026-11-22T10:10:00.000Z')]).when(cmd('completed')).then([reported('completed', 5)]);
  });

  it('refuses reports after completion, other than a repeat of it', () => {
    const done = [...provisioned(id), snapshotReceived(id, '2026-11-22T10:10:00.000Z'), reported('completed', 5)];
    phase.given(done).when(cmd('awaiting_first_snapshot')).thenRejects('conflict', /already completed/);
    phase.given(done).when(cmd('completed')).then([], { phase: 'completed', index: 5, recorded: false });
  });
});
