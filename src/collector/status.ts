import { join } from 'node:path';
import { Spool } from './spool.js';
import { readJsonFile } from './state-files.js';
import type { EnrollmentState } from './enroll.js';

/**
 * The agent's progress and backlog from its state directory: enrollment, acknowledged sequence,
 * spooled envelopes and events, and the running agent's last status (if any).
 */
export function agentStatus(stateDir: string): Record<string, unknown> {
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
