import type { SESSION_END_REASONS } from '../events/console-events.js';
import { eventOf } from '../events/union.js';
import type { ConsoleSessions } from '../projections/console-sessions.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';

/** Start a console session for a verified credential. */
export interface StartConsoleSession {
  readonly sessionHash: string;
  readonly principal: string;
  readonly authentication: string;
  readonly idleMinutes: number;
  readonly maxHours: number;
  readonly sourceAddress: string;
}

/** End a console session. */
export interface EndConsoleSession {
  readonly sessionHash: string;
  readonly reason: (typeof SESSION_END_REASONS)[number];
}

/** Starts a session that lasts at most `maxHours` from now; a session secret is never reused. */
export function decideStartConsoleSession(
  sessions: ConsoleSessions,
  cmd: StartConsoleSession,
  ctx: CommandContext,
): Decision<{ expiresAt: string }> {
  if (sessions.byHash[cmd.sessionHash]) return reject('conflict', 'that session already exists');
  const expiresAt = new Date(Date.parse(ctx.now) + cmd.maxHours * 3_600_000).toISOString();
  return accept(
    [
      eventOf('ConsoleSessionStarted', {
        sessionHash: cmd.sessionHash,
        principal: cmd.principal,
        authentication: cmd.authentication,
        expiresAt,
        idleMinutes: cmd.idleMinutes,
        sourceAddress: cmd.sourceAddress,
      }),
    ],
    { expiresAt },
  );
}

/** Ends an open session; ending one that is not open is a 404 (signing out twice changes nothing). */
export function decideEndConsoleSession(sessions: ConsoleSessions, cmd: EndConsoleSession): Decision<{ ended: true }> {
  const session = sessions.byHash[cmd.sessionHash];
  if (!session) return reject('not_found', 'no such open session');
  return accept(
    [
      eventOf('ConsoleSessionEnded', {
        sessionHash: cmd.sessionHash,
        principal: session.principal,
        reason: cmd.reason,
      }),
    ],
    { ended: true },
  );
}
