import { exhaustive } from '../events/read.js';
import { instanceProjection } from './types.js';

/** One open console session: whose, until when, and since when. */
export interface ConsoleSession {
  principal: string;
  authentication: string;
  startedAt: string;
  expiresAt: string;
  idleMinutes: number;
  sourceAddress: string;
}

/** Open console sessions by the SHA-256 of their secret (a plain object, so it checkpoints as it is). */
export interface ConsoleSessions {
  byHash: Record<string, ConsoleSession>;
}

/**
 * The console's sessions: started ones until they end. A session past its absolute end is dropped
 * when a later session starts (at that record's time), so the model stays as small as the number
 * of sessions that could still be used.
 */
export const consoleSessionsProjection = instanceProjection({
  name: 'console-sessions',
  version: 1,
  folds: ['ConsoleSessionStarted', 'ConsoleSessionEnded'],
  initial: (): ConsoleSessions => ({ byHash: {} }),
  evolve(s, record) {
    switch (record.type) {
      case 'ConsoleSessionStarted': {
        for (const [hash, session] of Object.entries(s.byHash))
          if (session.expiresAt <= record.at) delete s.byHash[hash];
        const d = record.data;
        s.byHash[d.sessionHash] = {
          principal: d.principal,
          authentication: d.authentication,
          startedAt: record.at,
          expiresAt: d.expiresAt,
          idleMinutes: d.idleMinutes,
          sourceAddress: d.sourceAddress,
        };
        return s;
      }
      case 'ConsoleSessionEnded':
        delete s.byHash[record.data.sessionHash];
        return s;
      default:
        return exhaustive(record, s);
    }
  },
});
