import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Spool } from './spool.js';
import { readJsonFile } from './state-files.js';
import type { EnrollmentState } from './enroll.js';

/** `vigil collector status` was pointed at a state directory that does not exist. */
export class NoStateDirectory extends Error {
  override readonly name = 'NoStateDirectory';
}

/**
 * The agent's progress and backlog from its state directory: enrollment, acknowledged sequence,
 * spooled envelopes and events, and the running agent's last status (if any).
 */
export function agentStatus(stateDir: string): Record<string, unknown> {
  // A mistyped path is named, not made: status never creates anything.
  if (!existsSync(stateDir))
    throw new NoStateDirectory(
      `there is no collector state directory at ${stateDir}: check --state-dir or the config's stateDir (enrollment ` +
        `makes it)`,
    );
  const spool = new Spool(stateDir);
  const ack = spool.ack();
  const live = readJsonFile<Record<string, unknown>>(join(stateDir, 'status.json'));
  return {
    enrollment: readJsonFile<EnrollmentState>(join(stateDir, 'enrollment.json')) ?? null,
    lastAckedSequence: ack.lastAcked,
    lastAckedAt: ack.ackedAt ?? null,
    backlog: spool.backlog(),
    agent: live ?? null,
  };
}
